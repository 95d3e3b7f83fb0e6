#!/usr/bin/env python3
"""PyTorch's CPU conv2d beside Backplane's, in one process on the same inputs:
the optional peer of `backplane bench conv` (PyTorch is never a dependency;
without it this script says so and exits 0). For each line of a shape set
(bench/shapes/conv/*.txt: n c_in h w c_out k stride padding groups
channels_last) it times torch.nn.functional.conv2d, Backplane's default
choice, its autotuned choice (cpu.benchmark) and its best single
implementation, and prints the ratios (> 1: Backplane faster). Time is the
median of --repeat runs after a warm-up.

    .venv-peers/bin/python bench/conv_torch_peer.py [--shapes resnet50 mobilenet_v2] [--threads 1]
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--shapes", nargs="+", default=["resnet50", "mobilenet_v2"])
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--repeat", type=int, default=7)
args = parser.parse_args()
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[var] = str(args.threads)

try:
    import torch
except ImportError:
    print("torch not importable: no PyTorch peer (make conformance sets up .venv-peers with it)")
    raise SystemExit(0)

import numpy as np  # noqa: E402

sys.path.insert(0, str(ROOT / "python"))
import backplane  # noqa: E402
import backplane.backends as B  # noqa: E402

torch.set_num_threads(args.threads)
backplane.set_num_threads(args.threads)
conv2d = backplane.nn.functional.conv2d


def median_ms(fn):
    fn()
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def lines(name):
    path = ROOT / "bench" / "shapes" / "conv" / f"{name}.txt"
    for raw in path.read_text().splitlines():
        line = raw.split("#")[0].split()
        if line:
            yield [int(v) for v in line]


print(f"{'shape':<28} {'torch ms':>9} {'default':>22} {'autotuned':>22} {'best own':>26}")
for name in args.shapes:
    for n, c, h, w, k, ks, s, p, g, cl in lines(name):
        x = np.random.default_rng(0).uniform(-1, 1, (n, c, h, w)).astype(np.float32)
        wt = np.random.default_rng(1).uniform(-1, 1, (k, c // g, ks, ks)).astype(np.float32)
        tx, tw = torch.from_numpy(x), torch.from_numpy(wt)
        if cl:
            tx = tx.contiguous(memory_format=torch.channels_last)
        bx, bw = backplane.from_dlpack(tx), backplane.asarray(wt)
        kw = {"stride": s, "padding": p, "groups": g}
        with torch.no_grad():
            t_torch = median_ms(lambda: torch.nn.functional.conv2d(tx, tw, **kw))
        default = B.explain("conv2d", bx, bw, **kw).chosen
        t_default = median_ms(lambda: conv2d(bx, bw, **kw))
        B.cpu.benchmark = True
        conv2d(bx, bw, **kw)
        tuned = B.explain("conv2d", bx, bw, **kw).chosen
        t_tuned = median_ms(lambda: conv2d(bx, bw, **kw))
        B.cpu.benchmark = False
        best, t_best = None, float("inf")
        for impl in ("winograd:f4x3", "direct:avx512", "direct:avx2", "im2col:gemm"):
            with B.implementations("conv", impl):
                if B.explain("conv2d", bx, bw, **kw).chosen is None:
                    continue
                t = median_ms(lambda: conv2d(bx, bw, **kw))
            if t < t_best:
                best, t_best = impl, t
        label = f"{n}x{c}x{h}x{w}->{k} k{ks}s{s}g{g}{' CL' if cl else ''}"
        print(f"{label:<28} {t_torch:9.3f} {default:>14} {t_torch / t_default:5.2f}x {tuned:>14} "
              f"{t_torch / t_tuned:5.2f}x {best or '-':>18} {t_torch / t_best:5.2f}x")
