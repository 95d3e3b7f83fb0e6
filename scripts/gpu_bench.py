#!/usr/bin/env python3
"""The side-by-side GPU benchmarks of scripts/gpu-check: Backplane's CUDA
implementations against PyTorch in one run (matmul: cublas:gemm and
cublaslt:gemm against torch.matmul; sdpa: cudnn:sdpa and math:cuda against
torch's scaled_dot_product_attention), each row with the ratio of our best
to torch's. Needs a GPU and an importable torch; says so and exits 0
otherwise."""

import time

import numpy as np

import backplane
import backplane.backends as B
from backplane.nn.attention import SDPAParams
from backplane.nn.functional import scaled_dot_product_attention as sdpa

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    raise SystemExit("torch not importable: no side-by-side benchmark")


def bench(fn, reps=20):
    """Seconds per call of fn on the GPU (one warm-up, then the mean of reps)."""
    fn(); torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps): fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / reps


def matmul_rows():
    for n in (1024, 4096, 8192):
        for dt in ("float32", "bfloat16"):
            a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
            x = backplane.asarray(a, device="cuda").to(dt)
            tx = torch.from_numpy(a).cuda().to(getattr(torch, dt))
            row = {}
            for impl in ("cublas:gemm", "cublaslt:gemm"):
                with B.implementations("matmul", impl):
                    row[impl] = bench(lambda: backplane.matmul(x, x))
            row["torch.matmul"] = bench(lambda: torch.matmul(tx, tx))
            flops = 2 * n ** 3
            print(f"matmul {n}^3 {dt}: " + "  ".join(f"{k} {flops / v / 1e12:.1f} TFLOP/s" for k, v in row.items())
                  + f"  (ours/torch best {row['torch.matmul'] / min(row['cublas:gemm'], row['cublaslt:gemm']):.2f}x)")


def sdpa_rows():
    q0 = backplane.asarray(np.zeros((1, 2, 64, 64), np.float32), device="cuda").to("float16")
    print("sdpa default choice (f16, 1x2x64x64):", B.explain("sdpa", q0, q0, q0).chosen,
          "| cudnn:sdpa usable:", B.cuda.can_use_cudnn_attention(SDPAParams(q0, q0, q0, None, 0.0, False, False), True))
    for b, h, L, d, causal in ((4, 16, 1024, 64, False), (2, 16, 4096, 64, True), (1, 16, 8192, 128, True)):
        x = np.random.default_rng(0).standard_normal((b, h, L, d)).astype(np.float32)
        q = backplane.asarray(x, device="cuda").to("float16")
        tq = torch.from_numpy(x).cuda().half()
        row = {}
        for impl in ("cudnn:sdpa", "math:cuda"):
            try:
                with B.implementations("sdpa", impl):
                    row[impl] = bench(lambda: sdpa(q, q, q, is_causal=causal), reps=5 if impl == "math:cuda" else 20)
            except Exception as e:
                print(f"  {impl}: {type(e).__name__}: {e}")
        row["torch"] = bench(lambda: F.scaled_dot_product_attention(tq, tq, tq, is_causal=causal))
        flops = 4 * b * h * L * L * d / (2 if causal else 1)
        best = min(v for k, v in row.items() if k != "torch") if len(row) > 1 else float("nan")
        print(f"sdpa B={b} H={h} L={L} D={d} causal={causal} f16: "
              + "  ".join(f"{k} {flops / v / 1e12:.1f} TFLOP/s" for k, v in row.items())
              + f"  (ours best / torch {row['torch'] / best:.2f}x)")


if __name__ == "__main__":
    for section in (matmul_rows, sdpa_rows):
        try:
            section()
        except Exception as e:  # one failing section still lets the other report
            print(f"{section.__name__}: {type(e).__name__}: {e}")
