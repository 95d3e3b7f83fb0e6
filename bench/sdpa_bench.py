"""Attention speed vs our GEMM and PyTorch (issue 12). Not a test.

Thread CPU time (one thread) or wall time (two threads), best of `reps`,
implementations and the peer interleaved in one process.
Run: PYTHONPATH=python /work/.venv-peers/bin/python bench/sdpa_bench.py [sections]
"""
import sys
import time

import ml_dtypes
import numpy as np
import torch

import backplane as bp
from backplane import backends
from backplane.nn import functional as F

REPS = int(next((a[5:] for a in sys.argv if a.startswith("reps=")), 5))
SECTIONS = [a for a in sys.argv[1:] if "=" not in a] or ["gemm", "prefill", "decode", "eff"]


def timed(fn, threads, reps=REPS, min_time=0.3):
    clock = time.thread_time if threads == 1 else time.perf_counter
    fn()
    if threads > 1:  # wall time of single calls, best of many: the other builders come and go
        best = float("inf")
        t_end = time.perf_counter() + min_time * reps
        while time.perf_counter() < t_end:
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return best
    best = float("inf")
    for _ in range(reps):
        n, t0 = 0, clock()
        while True:
            fn()
            n += 1
            t = clock() - t0
            if t >= min_time or n >= 50:
                break
        best = min(best, t / n)
    return best


def pair(shape_q, shape_kv, dtype, rng):
    q = rng.standard_normal(shape_q, dtype=np.float32)
    k = rng.standard_normal(shape_kv, dtype=np.float32)
    v = rng.standard_normal(shape_kv, dtype=np.float32)
    if dtype == "bf16":
        b = [x.astype(ml_dtypes.bfloat16) for x in (q, k, v)]
        t = [torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16) for x in b]
    else:
        b = [x for x in (q, k, v)]
        t = [torch.from_numpy(x) for x in b]
    return [bp.asarray(x) for x in b], t


def set_threads(n):
    bp.set_num_threads(n)
    torch.set_num_threads(n)


rng = np.random.default_rng(0)
gemm_rate = {}
print(f"backplane from {bp.__file__}")
if "gemm" in SECTIONS or "prefill" in SECTIONS or "eff" in SECTIONS:
    set_threads(1)
    for dt in ("f32", "bf16"):
        a = rng.standard_normal((1024, 1024), dtype=np.float32)
        b = rng.standard_normal((1024, 1024), dtype=np.float32)
        if dt == "bf16":
            a, b = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
        A, B = bp.asarray(a), bp.asarray(b)
        t = timed(lambda: bp.matmul(A, B), 1)
        gemm_rate[dt] = 2 * 1024**3 / t / 1e9
        print(f"gemm 1024^3 {dt}: {gemm_rate[dt]:.0f} GFLOP/s")

if "prefill" in SECTIONS:
    set_threads(1)
    H, L = 8, int(next((a[2:] for a in sys.argv if a.startswith("L=")), 4096))
    print(f"\nprefill B=1 H={H} L=S={L}, 1 thread; GFLOP/s = 4LSD·H (/2 causal) / thread time")
    print(f"{'D':>4} {'dt':>5} {'causal':>6} {'flash':>7} {'/gemm':>6} {'eff':>7} {'eff/fl':>6} {'torch':>7} {'fl/torch':>8}")
    for D in (64, 128):
        for dt in ("f32", "bf16"):
            (q, k, v), (tq, tk, tv) = pair((1, H, L, D), (1, H, L, D), dt, rng)
            for causal in (False, True):
                fl = 4 * L * L * D * H / (2 if causal else 1) / 1e9
                res = {}
                for _ in range(2):  # interleave
                    with backends.implementations("sdpa", "flash:cpu"):
                        res["fl"] = min(res.get("fl", 1e9), timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 1, reps=2))
                    with backends.implementations("sdpa", "efficient:cpu"):
                        res["ef"] = min(res.get("ef", 1e9), timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 1, reps=2))
                    res["to"] = min(res.get("to", 1e9), timed(lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal), 1, reps=2))
                g = {k_: fl / t for k_, t in res.items()}
                print(f"{D:>4} {dt:>5} {causal!s:>6} {g['fl']:7.1f} {g['fl'] / gemm_rate[dt]:6.2f} {g['ef']:7.1f} "
                      f"{g['ef'] / g['fl']:6.2f} {g['to']:7.1f} {g['fl'] / g['to']:8.2f}", flush=True)

if "decode" in SECTIONS:
    print("\ndecode L=1, 32 q heads / 4 kv heads, D=128 (enable_gqa); times in us; 1 thr = thread time, 2 thr = wall")
    print(f"{'S':>6} {'dt':>5} {'thr':>3} {'flash':>9} {'eff':>9} {'torch':>9} {'torch/fl':>8} {'torch/ef':>8}")
    for thr in (1, 2):
        set_threads(thr)
        for S in (4096, 16384, 32768):
            for dt in ("f32", "bf16"):
                (q, k, v), (tq, tk, tv) = pair((1, 32, 1, 128), (1, 4, S, 128), dt, rng)
                res = {}
                for _ in range(2):
                    with backends.implementations("sdpa", "flash:cpu"):
                        res["fl"] = min(res.get("fl", 1e9), timed(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), thr))
                    with backends.implementations("sdpa", "efficient:cpu"):
                        res["ef"] = min(res.get("ef", 1e9), timed(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), thr))
                    res["to"] = min(res.get("to", 1e9), timed(lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True), thr))
                print(f"{S:>6} {dt:>5} {thr:>3} {res['fl'] * 1e6:9.0f} {res['ef'] * 1e6:9.0f} {res['to'] * 1e6:9.0f} "
                      f"{res['to'] / res['fl']:8.2f} {res['to'] / res['ef']:8.2f}", flush=True)
