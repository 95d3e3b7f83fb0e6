#!/usr/bin/env python3
"""The tour `make run` gives after `backplane info`: knobs, where their values
come from, scopes, and what each choice permits.

As operations land (matmul, attention, ...), each gets a stop here showing
which implementation its knobs select.
"""

import threading

import backplane
import backplane.backends as B
from backplane.nn.attention import SDPBackend, sdpa_kernel


def say(title):
    print(f"\n== {title}")


def main():
    say("The machine (details: backplane info)")
    usable = [b.name for b in B.list_backends() if b.available]
    print(f"CPU capability {B.cpu.get_cpu_capability()}; usable backends: {', '.join(usable)}")
    if not backplane.cuda.is_available():
        print(f"CUDA: {backplane.cuda.unavailable_reason()}")

    say("Precision is a permission, held in one tree")
    print(f"float32 matmul precision: {backplane.get_float32_matmul_precision()}")
    backplane.set_float32_matmul_precision("medium")
    print("after set_float32_matmul_precision('medium'):")
    print(f"  CPU matmul (mkldnn.matmul.fp32_precision) = {B.mkldnn.matmul.fp32_precision}  -> bf16 kernels may run")
    print(f"  CUDA matmul (cuda.matmul.fp32_precision)  = {B.cuda.matmul.fp32_precision}  -> TF32 tensor cores may run")
    print(f"  cuda.matmul.allow_tf32 (a view)            = {B.cuda.matmul.allow_tf32}")
    backplane.set_float32_matmul_precision("highest")
    print(f"after 'highest': CPU {B.mkldnn.matmul.fp32_precision}, CUDA {B.cuda.matmul.fp32_precision}")

    say("Knobs choose what runs: matmul of 512x1024 by 1024x256")
    import numpy as np
    a = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((1024, 256)).astype(np.float32)

    def chosen(note):
        d = B.explain("matmul", a, b)
        print(f"  {note:<48} -> {d.chosen}")

    chosen("default (fp32 precision 'highest')")
    backplane.set_float32_matmul_precision("medium")
    chosen("set_float32_matmul_precision('medium')")
    backplane.set_float32_matmul_precision("highest")
    B.cpu.preferred_blas_library("openblas")
    chosen("cpu.preferred_blas_library('openblas')")
    B.cpu.preferred_blas_library("default")
    with B.mkldnn.flags(enabled=False), B.implementations("matmul", "onednn", "ref"):
        chosen("implementations('onednn', 'ref') + mkldnn off")
    rows = B.explain("matmul", a, b)
    rejected = [r for r in rows if r.status == "rejected"]
    if rejected:
        print(f"  and why {rejected[0].implementation} is not used: {rejected[0].reasons[0]}")

    say("Scopes belong to one thread")
    seen = {}

    def other_thread():
        seen["benchmark"] = B.cudnn.benchmark

    with B.cudnn.flags(enabled=True, benchmark=True):
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        print(f"inside cudnn.flags(benchmark=True): this thread sees {B.cudnn.benchmark}, "
              f"another thread sees {seen['benchmark']}")
    print(f"after the scope: {B.cudnn.benchmark}")

    say("Attention backends choose the SDPA implementation, per thread")
    q = np.random.default_rng(2).standard_normal((1, 4, 128, 64)).astype(np.float32)
    print(f"  default                                          -> {B.explain('sdpa', q, q, q).chosen}")
    with sdpa_kernel([SDPBackend.MATH]):
        print(f"  sdpa_kernel([MATH])                              -> {B.explain('sdpa', q, q, q).chosen}")
    print(f"  after the scope: flash {B.cuda.flash_sdp_enabled()}, math {B.cuda.math_sdp_enabled()}")
    print("  CUDA tensors go to (in cuda.sdp_priority_order):")
    for impl in B.list_implementations("sdpa"):
        if impl.name in ("cudnn:sdpa", "math:cuda"):
            state = "ready" if impl.available else impl.reason
            print(f"    {impl.name:<12} {state}")

    say("Bad input is a clear error, and changes nothing")
    for attempt in (lambda: setattr(B.cudnn, "benchmark_limit", -1),
                    lambda: setattr(B.cudnn, "benchmark", 1),
                    lambda: B.cuda.preferred_blas_library("mkl")):
        try:
            attempt()
        except (ValueError, TypeError, RuntimeError) as e:
            print(f"  {type(e).__name__}: {e}")
    print(f"cudnn.benchmark_limit is still {B.cudnn.benchmark_limit}")


if __name__ == "__main__":
    main()
