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

    say("Attention backends, scoped")
    with sdpa_kernel([SDPBackend.MATH]):
        print(f"inside sdpa_kernel([MATH]): flash {B.cuda.flash_sdp_enabled()}, math {B.cuda.math_sdp_enabled()}")
    print(f"after: flash {B.cuda.flash_sdp_enabled()}, math {B.cuda.math_sdp_enabled()}")

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
