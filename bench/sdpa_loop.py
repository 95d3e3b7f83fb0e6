"""Runs one sdpa shape in a loop for perf record. args: impl dtype L S Hq Hkv D causal seconds"""
import sys
import time

import ml_dtypes
import numpy as np

import backplane as bp
from backplane import backends
from backplane.nn import functional as F

impl, dt, L, S, hq, hkv, D, causal, secs = sys.argv[1:10]
L, S, hq, hkv, D, causal, secs = int(L), int(S), int(hq), int(hkv), int(D), causal == "1", float(secs)
bp.set_num_threads(int(sys.argv[10]) if len(sys.argv) > 10 else 1)
rng = np.random.default_rng(0)
npd = ml_dtypes.bfloat16 if dt == "bf16" else np.float32
q = bp.asarray(rng.standard_normal((1, hq, L, D), dtype=np.float32).astype(npd))
k = bp.asarray(rng.standard_normal((1, hkv, S, D), dtype=np.float32).astype(npd))
v = bp.asarray(rng.standard_normal((1, hkv, S, D), dtype=np.float32).astype(npd))
n, t0 = 0, time.thread_time()
with backends.implementations("sdpa", impl):
    while time.thread_time() - t0 < secs:
        F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hq != hkv)
        n += 1
t = (time.thread_time() - t0) / n
print(f"{impl} {dt} L={L} S={S} {hq}/{hkv} D={D} causal={causal}: {t * 1e3:.2f} ms, "
      f"{4 * L * S * D * hq / (2 if causal else 1) / t / 1e9:.1f} GFLOP/s")
