#!/usr/bin/env python3
"""The side-by-side GPU benchmarks of scripts/gpu-check: Backplane's CUDA
implementations against PyTorch in one run (matmul: cublas:gemm and
cublaslt:gemm against torch.matmul; sdpa: cudnn:sdpa and math:cuda against
torch's scaled_dot_product_attention; conv: cudnn:conv and native:depthwise
against torch.nn.functional.conv2d on ResNet-50 and MobileNet-V2 layers;
sparse: cusparselt:spmma against torch's to_sparse_semi_structured linear),
each row with the ratio of our best to torch's. Needs a GPU and an importable torch; says so and exits 0
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


def conv_rows():
    # n, c_in, hw, c_out, k, stride, padding, groups: ResNet-50 3x3 and 1x1, MobileNet-V2 depthwise
    layers = ((8, 64, 56, 64, 3, 1, 1, 1), (8, 256, 14, 256, 3, 1, 1, 1), (8, 256, 56, 64, 1, 1, 0, 1),
              (8, 144, 56, 144, 3, 1, 1, 144), (8, 960, 7, 960, 3, 1, 1, 960))
    for n, c, hw, k, ks, s, p, g in layers:
        for dt, cl in (("float32", True), ("float16", True), ("float32", False)):
            x = np.random.default_rng(0).standard_normal((n, c, hw, hw)).astype(np.float32)
            w = np.random.default_rng(1).standard_normal((k, c // g, ks, ks)).astype(np.float32)
            fmt = torch.channels_last if cl else torch.contiguous_format
            tx = torch.from_numpy(x).cuda().to(getattr(torch, dt)).to(memory_format=fmt)
            tw = torch.from_numpy(w).cuda().to(getattr(torch, dt)).to(memory_format=fmt)
            bx, bw = backplane.from_dlpack(tx), backplane.from_dlpack(tw)
            row = {}
            for impl in ("cudnn:conv", "native:depthwise"):
                with B.implementations("conv", impl):
                    if B.explain("conv2d", bx, bw, stride=s, padding=p, groups=g).chosen is None:
                        continue
                    row[impl] = bench(lambda: F2.conv2d(bx, bw, stride=s, padding=p, groups=g))
            row["torch"] = bench(lambda: F.conv2d(tx, tw, stride=s, padding=p, groups=g))
            flops = 2 * n * k * (c // g) * ks * ks * (hw // s) ** 2
            best = min(v for key, v in row.items() if key != "torch") if len(row) > 1 else float("nan")
            print(f"conv2d {n}x{c}x{hw}x{hw} -> {k} k{ks} s{s} g{g} {dt} {'NHWC' if cl else 'NCHW'}: "
                  + "  ".join(f"{key} {flops / v / 1e12:.2f} TFLOP/s" for key, v in row.items())
                  + f"  (ours best / torch {row['torch'] / best:.2f}x; default "
                  + f"{B.explain('conv2d', bx, bw, stride=s, padding=p, groups=g).chosen})")


def sparse_rows():
    """cusparselt:spmma (alg 0, then the cudnn.benchmark search) against torch's to_sparse_semi_structured
    linear on its cuSPARSELt path and the dense F.linear, with the largest difference from torch's sparse result."""
    from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured
    SparseSemiStructuredTensor._FORCE_CUTLASS = False
    for out, k, n in ((4096, 4096, 1024), (11008, 4096, 2048), (8192, 8192, 4096)):
        for dt in ("float16", "bfloat16"):
            rng = np.random.default_rng(0)
            w = rng.standard_normal((out, k)).astype(np.float32)
            x = rng.standard_normal((n, k)).astype(np.float32)
            ws = backplane.sparse.to_sparse_semi_structured(backplane.asarray(w).to(dt), prune=True)
            packed, meta = ws.packed.to("cuda"), ws.meta.to("cuda")
            bx = backplane.asarray(x, device="cuda").to(dt)
            tdt = getattr(torch, dt)
            dense = torch.from_numpy(np.asarray(ws.to_dense().to("float32").numpy())).to(tdt).cuda()
            tw, tx = to_sparse_semi_structured(dense), torch.from_numpy(x).to(tdt).cuda()
            row = {}
            if B.explain("sparse_linear", bx, packed, meta).chosen != "cusparselt:spmma":
                print(f"sparse {out}x{k} n={n} {dt}: cusparselt:spmma not chosen:\n"
                      f"{B.explain('sparse_linear', bx, packed, meta)}")
                continue
            row["spmma alg 0"] = bench(lambda: backplane.sparse.semi_structured_linear(bx, packed, meta))
            B.cudnn.benchmark = True
            try:
                row["spmma searched"] = bench(lambda: backplane.sparse.semi_structured_linear(bx, packed, meta))
            finally:
                B.cudnn.benchmark = False
            row["torch sparse"] = bench(lambda: F.linear(tx, tw))
            row["torch dense"] = bench(lambda: F.linear(tx, dense))
            ours = backplane.sparse.semi_structured_linear(bx, packed, meta).to("cpu").to("float32").numpy()
            diff = float(np.abs(np.asarray(ours) - F.linear(tx, tw).float().cpu().numpy()).max())
            flops = 2 * out * k * n
            best = min(row["spmma alg 0"], row["spmma searched"])
            print(f"sparse {out}x{k} n={n} {dt}: " + "  ".join(f"{key} {flops / v / 1e12:.1f} TFLOP/s"
                                                               for key, v in row.items())
                  + f"  (ours best / torch sparse {row['torch sparse'] / best:.2f}x; max |ours - torch| {diff:.3g})")


if __name__ == "__main__":
    F2 = backplane.nn.functional
    for section in (matmul_rows, sdpa_rows, conv_rows, sparse_rows):
        try:
            section()
        except Exception as e:  # one failing section still lets the other report
            print(f"{section.__name__}: {type(e).__name__}: {e}")
