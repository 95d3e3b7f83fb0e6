#!/usr/bin/env python3
"""backplane.einsum and its native path optimiser against their peers, in one run:

1. path search: Backplane's contract_path (C++, path cache off) against
   opt_einsum.contract_path, per strategy, on random networks (opt_einsum's
   own rand_equation when it is importable, regularity 3, 2 output labels),
   with the cost of each path (opt_einsum's cost model);
2. execution: backplane.einsum against NumPy's einsum (optimize=True) and
   against the direct backplane.matmul calls it amounts to, for a 4-matrix
   chain and for bij,bjk->bik.

Times are the best of --repeat runs (--exec-repeat for executions): path searches in this thread's CPU time
(time.thread_time), executions (multi-threaded) in wall-clock time; on a
shared machine compare the ratios within one run, not times across runs. opt_einsum is not a dependency of
Backplane: install it anywhere to include it, e.g.

    python3 -m venv /tmp/oe && /tmp/oe/bin/pip install opt_einsum numpy
    PYTHONPATH=python /tmp/oe/bin/python bench/einsum_peers.py
"""

import argparse
import os
import random
import string
import sys
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--operands", type=int, nargs="+", default=[8, 16, 30])
parser.add_argument("--networks", type=int, default=5, help="random networks per size")
parser.add_argument("--repeat", type=int, default=3, help="runs per path search (best of)")
parser.add_argument("--exec-repeat", type=int, default=20,
                    help="runs per execution (best of): the first calls after the searches fault in fresh output "
                         "pages, and best of 3 left bij,bjk->bik at 1.5-1.9x matmul's time, best of 20 at 1.05x")
parser.add_argument("--size", type=int, default=256, help="matrix size of the execution problems")
parser.add_argument("--threads", type=int, default=2)
args = parser.parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import backplane  # noqa: E402
import backplane.backends as B  # noqa: E402

try:
    import opt_einsum
except ImportError:
    opt_einsum = None

backplane.set_num_threads(args.threads)
native = B.opt_einsum.get_opt_einsum()


def best_ms(fn, repeat=args.repeat, clock=time.perf_counter):
    fn()
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return 1e3 * min(times)


def best_cpu_ms(fn, repeat=args.repeat):
    """This thread's CPU time: a path search runs on the calling thread, and on a
    shared machine wall-clock time also counts the time it waited for a core."""
    return best_ms(fn, repeat, time.thread_time)


def random_network(n, seed):
    """(equation, shapes): opt_einsum's rand_equation when importable, else the same recipe."""
    try:
        from opt_einsum.testing import rand_equation  # needs pytest too
    except ImportError:
        rand_equation = None
    if rand_equation is not None:
        eq, shapes = rand_equation(n, 3, n_out=2, seed=seed)
        return eq, [tuple(s) for s in shapes]
    rng = random.Random(seed)
    terms, sizes, letters = [[] for _ in range(n)], {}, iter(string.ascii_letters)
    for _ in range(n * 3 // 2):
        c = next(letters)
        sizes[c] = rng.randint(2, 9)
        for t in rng.sample(range(n), 2):
            terms[t].append(c)
    out = []
    for _ in range(2):
        c = next(letters)
        sizes[c] = rng.randint(2, 9)
        terms[rng.randrange(n)].append(c)
        out.append(c)
    return ",".join("".join(t) for t in terms) + "->" + "".join(out), [tuple(sizes[c] for c in t) for t in terms]


def path_search():
    print("path search: ms of this thread's CPU time per network (mean of best-of-%d), cost relative to "
          "opt_einsum's path" % args.repeat)
    print("  (backplane: contract_path from Python, whose report is built when first read, and not read here;")
    print("   opt_einsum: its contract_path, and its bare path function alone, without parsing or report)")
    print(f"  {'n':>3} {'strategy':<11} {'backplane ms':>13} {'opt_einsum ms':>14} {'speedup':>9} "
          f"{'bare fn ms':>11} {'speedup':>9} {'cost ratio':>11}")
    native.set_cache_max_size(0)  # every search runs
    try:
        for n in args.operands:
            strategies = ["greedy", "dp", "auto", "branch-1"] + (["branch-2"] if n <= 10 else []) + \
                         (["optimal", "branch-all"] if n <= 6 else [])
            if n > 24:
                strategies.remove("dp")  # seconds in opt_einsum, and in ours too on dense networks
            for s in strategies:
                ours = theirs = bare = 0.0
                ratios = []
                for seed in range(args.networks):
                    eq, shapes = random_network(n, seed)
                    ours += best_cpu_ms(lambda: native.contract_path(eq, *shapes, optimize=s))
                    if opt_einsum is not None:
                        theirs += best_cpu_ms(lambda: opt_einsum.contract_path(eq, *shapes, optimize=s, shapes=True))
                        lhs, out = eq.split("->")
                        inputs = [frozenset(t) for t in lhs.split(",")]
                        sizes = {c: d for t, sh in zip(lhs.split(","), shapes) for c, d in zip(t, sh)}
                        fn = opt_einsum.paths.get_path_fn(s)
                        bare += best_cpu_ms(lambda: fn(inputs, frozenset(out), sizes, None))
                        ratios.append(native.contract_path(eq, *shapes, optimize=s)[1].opt_cost /
                                      float(opt_einsum.contract_path(eq, *shapes, optimize=s, shapes=True)[1].opt_cost))
                k = args.networks
                if opt_einsum is None:
                    print(f"  {n:>3} {s:<11} {ours / k:>13.3f} {'-':>14} {'-':>9} {'-':>11} {'-':>9} {'-':>11}")
                else:
                    print(f"  {n:>3} {s:<11} {ours / k:>13.3f} {theirs / k:>14.3f} {theirs / ours:>8.1f}x "
                          f"{bare / k:>11.3f} {bare / ours:>8.1f}x {max(ratios):>10.3f}")
            if n <= 24:  # auto against dp's cost
                worst = max(native.contract_path(*(lambda e: (e[0], *e[1]))(random_network(n, seed)), optimize="auto")[1].opt_cost /
                            native.contract_path(*(lambda e: (e[0], *e[1]))(random_network(n, seed)), optimize="dp")[1].opt_cost
                            for seed in range(args.networks))
                print(f"  {n:>3} auto / dp cost, worst of {args.networks}: {worst:.3f}")
    finally:
        native.set_cache_max_size(1024)


def execution():
    n = args.size
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal((n, n), dtype=np.float32) for _ in range(4)]
    bp_mats = [backplane.asarray(m) for m in mats]
    a = rng.standard_normal((8, n, n), dtype=np.float32)
    b = rng.standard_normal((8, n, n), dtype=np.float32)
    ba, bb = backplane.asarray(a), backplane.asarray(b)
    mm = backplane.matmul
    print(f"\nexecution, f32, {args.threads} threads: ms (best of {args.exec_repeat})")
    rows = [
        ("ab,bc,cd,de->ae", lambda: backplane.einsum("ab,bc,cd,de->ae", *bp_mats),
         lambda: mm(mm(mm(bp_mats[0], bp_mats[1]), bp_mats[2]), bp_mats[3]),
         lambda: np.einsum("ab,bc,cd,de->ae", *mats, optimize=True)),
        ("bij,bjk->bik", lambda: backplane.einsum("bij,bjk->bik", ba, bb), lambda: mm(ba, bb),
         lambda: np.einsum("bij,bjk->bik", a, b, optimize=True)),
    ]
    print(f"  {'equation':<18} {'einsum':>9} {'matmul calls':>13} {'ratio':>7} {'numpy einsum':>13}")
    for name, ours, direct, numpy in rows:
        t_ours, t_direct, t_np = (best_ms(f, args.exec_repeat) for f in (ours, direct, numpy))
        print(f"  {name:<18} {t_ours:>9.3f} {t_direct:>13.3f} {t_ours / t_direct:>6.2f}x {t_np:>13.3f}")


path_search()
execution()
