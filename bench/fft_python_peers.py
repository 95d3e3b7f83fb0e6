#!/usr/bin/env python3
"""backplane.fft beside numpy.fft and torch.fft from Python, one thread: the
per-call cost of repeated calls (each library on its own tensor type, plan
caches warm) and the latency of the first call in a fresh process (default
planning effort; imports and input creation not counted). Ratios are peer
time / Backplane time (> 1: Backplane faster). PyTorch is optional: without
it its columns are left out.

    PYTHONPATH=python .venv-peers/bin/python bench/fft_python_peers.py [--repeat 9] [--first-runs 5] [--native]

--native adds a column for backplane.fft forced to native:stockham (Backplane's own FFT).
"""

import argparse
import contextlib
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[var] = "1"
sys.path.insert(0, str(ROOT / "python"))

# (label, shape, entry): complex64 transforms over every dim.
CASES = [("1-D 4096", (4096,), "fft"), ("2-D 512x512", (512, 512), "fft2"),
         ("1-D 1000", (1000,), "fft"), ("1-D 4099 (prime)", (4099,), "fft"), ("batch 64 x 1-D 1024", (64, 1024), "fft")]


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


def make_input(shape):
    import numpy as np
    rng = np.random.default_rng(0)
    return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(np.complex64)


def forced(lib):
    """The scope of `lib`: "native" is backplane.fft with native:stockham forced."""
    if lib != "native":
        return contextlib.nullcontext()
    import backplane.backends
    return backplane.backends.implementations("fft", "native:stockham")


def callers(lib, x, entry):
    """The call to time, on the library's own tensor type."""
    if lib in ("backplane", "native"):
        import backplane
        import backplane.fft as F
        backplane.set_num_threads(1)
        t = backplane.asarray(x)
        fn = getattr(F, entry)
        return lambda: fn(t)
    if lib == "numpy":
        import numpy as np
        fn = getattr(np.fft, entry)
        return lambda: fn(x)
    import torch
    torch.set_num_threads(1)
    t = torch.from_numpy(x)
    fn = getattr(torch.fft, entry)
    return lambda: fn(t)


def per_call_us(fn, repeat, batch_ms=20.0):
    """Median over `repeat` batches of the mean time of one call (µs)."""
    fn()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < batch_ms / 1e3:  # calls per batch
        fn()
        n += 1
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(samples)


def first_call_child(lib, label):
    shape, entry = next((s, e) for lbl, s, e in CASES if lbl == label)
    x = make_input(shape)
    fn = callers(lib, x, entry)  # imports and the input conversion happen here, untimed
    with forced(lib):
        t0 = time.perf_counter()
        fn()
    print(json.dumps((time.perf_counter() - t0) * 1e6))


def first_call_us(lib, label, runs):
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, __file__, "--child", lib, label], capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
        times.append(json.loads(out.stdout))
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=9, help="timed batches per row (the median is reported)")
    p.add_argument("--first-runs", type=int, default=5, help="fresh processes per first-call row")
    p.add_argument("--native", action="store_true", help="also backplane.fft forced to native:stockham")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return first_call_child(*a.child)
    libs = ["backplane"] + (["native"] if a.native else []) + ["numpy"] + (["torch"] if have_torch() else [])
    peers = libs[1:]
    print(f"repeated calls, complex64, 1 thread: µs per call (median of {a.repeat} batches)")
    print(f"{'problem':<22}" + "".join(f"{lib:>11}" for lib in libs) + "".join(f"{'vs ' + q:>11}" for q in peers))
    for label, shape, entry in CASES:
        x = make_input(shape)
        us = {}
        for lib in libs:
            with forced(lib):
                us[lib] = per_call_us(callers(lib, x, entry), a.repeat)
        print(f"{label:<22}" + "".join(f"{us[lib]:>11.2f}" for lib in libs) +
              "".join(f"{us[q] / us['backplane']:>10.2f}x" for q in peers))
    print(f"\nfirst call in a fresh process (default effort), complex64: µs (median of {a.first_runs} processes)")
    mine = ["backplane"] + (["native"] if a.native else [])
    print(f"{'problem':<22}" + "".join(f"{lib:>11}" for lib in libs) + "".join(f"{lib[:6] + ' / numpy':>15}" for lib in mine))
    for label, _, _ in CASES[:2]:
        us = {lib: first_call_us(lib, label, a.first_runs) for lib in libs}
        print(f"{label:<22}" + "".join(f"{us[lib]:>11.1f}" for lib in libs) +
              "".join(f"{us[lib] / us['numpy']:>14.2f}x" for lib in mine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
