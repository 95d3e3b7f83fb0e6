"""2:4 sparse kernels against our dense GEMM of the same dtype, in one process.

Usage: PYTHONPATH=python .venv/bin/python bench/sparse_vs_dense.py [--threads 1] [--n 1,16,256,1024]
       [--impls sparse24:cpu,sparse24:avx2,dense:matmul] [--dtypes float32,bfloat16,medium] [--reps 5]
Per-thread CPU time (time.thread_time) at one thread (the machine is shared);
at more threads the process's CPU time divided by the thread count (wall
time on a shared machine measures the other jobs; this counts OpenMP's
spin-waits too, so it flatters nothing). Implementations interleaved, best of --reps.
"medium": float32 operands under set_float32_matmul_precision("medium")
(bf16 products permitted), for the sparse and the dense product alike.
GFLOP/s count the dense product, 2 * out * in * n.
"""

import argparse
import time

import ml_dtypes
import numpy as np

import backplane
from backplane import backends, sparse
import backplane.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--n", default="1,16,256,1024")
ap.add_argument("--impls", default="sparse24:cpu,sparse24:avx2,dense:matmul")
ap.add_argument("--dtypes", default="float32,bfloat16,medium")
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--out", type=int, default=4096)
ap.add_argument("--inf", type=int, default=4096)
a = ap.parse_args()
backplane.set_num_threads(a.threads)
clock = time.thread_time if a.threads == 1 else (lambda: time.process_time() / a.threads)
rng = np.random.default_rng(0)
print("backplane from", backplane.__file__, "threads", a.threads)
print(f"{'dtype':9} {'n':>5} {'impl':16} {'ms':>9} {'GF/s':>7} {'dense ms':>9} {'ratio':>6}")
for dt in a.dtypes.split(","):
    np_dt = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}.get(dt, np.float32)
    backplane.set_float32_matmul_precision("medium" if dt == "medium" else "highest")
    w = sparse.prune_semi_structured(rng.uniform(-1, 1, (a.out, a.inf)).astype(np_dt))
    ws = sparse.to_sparse_semi_structured(w)
    for n in [int(s) for s in a.n.split(",")]:
        x = backplane.asarray(rng.uniform(-1, 1, (n, a.inf)).astype(np_dt))
        runs = {"dense": lambda: F.linear(x, w)}
        for impl in a.impls.split(","):
            def f(impl=impl):
                with backends.implementations("sparse", impl):
                    return F.linear(x, ws)
            runs[impl] = f
        best = {k: float("inf") for k in runs}
        inner = max(1, int(2e8 / (2 * a.out * a.inf * n)))
        for k in runs:
            runs[k]()  # warm up
        for _ in range(a.reps):
            for k, f in runs.items():
                t0 = clock()
                for _ in range(inner):
                    f()
                best[k] = min(best[k], (clock() - t0) / inner)
        flops = 2.0 * a.out * a.inf * n
        for k in runs:
            print(f"{dt:9} {n:5} {k:16} {best[k]*1e3:9.3f} {flops/best[k]/1e9:7.1f} {best['dense']*1e3:9.3f} "
                  f"{best['dense']/best[k]:6.2f}", flush=True)
backplane.set_float32_matmul_precision("highest")
