#!/usr/bin/env python3
"""flash:cpu (and the other CPU sdpa implementations) against NumPy's naive
attention, softmax(q kᵀ / sqrt(D)) v with the (B, H, L, S) scores in memory:
the peer the SDPA issue measured (647 ms and 585 MB at L=4096 on one core).
Time is the best of --repeat runs; memory is the peak of what each side
allocated during one call (backplane.memory_stats for ours, tracemalloc,
which NumPy reports to, for NumPy).

    .venv/bin/python bench/sdpa_numpy_peer.py [--lengths 1024 4096] [--threads 1]
"""

import argparse
import os
import sys
import time
import tracemalloc

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--lengths", type=int, nargs="+", default=[1024, 4096])
parser.add_argument("--batch", type=int, default=1)
parser.add_argument("--heads", type=int, default=8)
parser.add_argument("--dim", type=int, default=64)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--repeat", type=int, default=3)
args = parser.parse_args()
# NumPy's BLAS reads its thread count at import.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import backplane  # noqa: E402
import backplane.backends as B  # noqa: E402
from backplane.nn.functional import scaled_dot_product_attention as sdpa  # noqa: E402

backplane.set_num_threads(args.threads)


def numpy_attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1], dtype=q.dtype)
    s = np.exp(s - s.max(-1, keepdims=True))
    return (s / s.sum(-1, keepdims=True)) @ v


def best_ms(fn):
    fn()
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * min(times)


def numpy_peak_mib(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def ours_peak_mib(fn):
    backplane.reset_peak_memory_stats()
    before = backplane.memory_stats()["cpu"]["current_bytes"]
    fn()
    return (backplane.memory_stats()["cpu"]["peak_bytes"] - before) / 2**20


print(f"B={args.batch} H={args.heads} D={args.dim} fp32, {args.threads} thread(s), best of {args.repeat}")
print(f"{'L=S':>6}  {'implementation':<16} {'ms':>10} {'GFLOP/s':>8} {'peak MiB':>9} {'vs NumPy':>9}")
rng = np.random.default_rng(0)
for n in args.lengths:
    shape = (args.batch, args.heads, n, args.dim)
    q, k, v = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
    flops = 4.0 * args.batch * args.heads * n * n * args.dim
    ref_ms = best_ms(lambda: numpy_attention(q, k, v))
    print(f"{n:>6}  {'numpy (naive)':<16} {ref_ms:>10.1f} {flops / ref_ms / 1e6:>8.1f} "
          f"{numpy_peak_mib(lambda: numpy_attention(q, k, v)):>9.1f} {1.0:>8.2f}x")
    for impl in ("flash:cpu", "efficient:cpu", "math:any"):
        with B.implementations("sdpa", impl):
            ms = best_ms(lambda: sdpa(q, k, v))
            mib = ours_peak_mib(lambda: sdpa(q, k, v))
        print(f"{n:>6}  {impl:<16} {ms:>10.1f} {flops / ms / 1e6:>8.1f} {mib:>9.1f} {ref_ms / ms:>8.2f}x")
