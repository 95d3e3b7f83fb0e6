#!/usr/bin/env python3
"""The tour `make run` gives after `backplane info`: knobs, where their values
come from, scopes, and what each choice permits.

Every operation (matmul, attention, convolution, FFT, linear algebra,
einsum, RNN, multi-head attention, 2:4 sparse) has a stop here showing
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

    say("Every op has its knobs: what runs, and what a knob changes")
    rng = np.random.default_rng(3)

    def row(what, table):
        print(f"  {what:<58} -> {table.chosen}")

    # channels-last depthwise over 196 points: oneDNN leads (Note [Conv default order]).
    x = rng.standard_normal((1, 14, 14, 64)).astype(np.float32).transpose(0, 3, 1, 2)
    w = rng.standard_normal((64, 1, 3, 3)).astype(np.float32)
    depthwise = dict(padding=1, groups=64)
    row("conv2d depthwise 3x3, default", B.explain("conv2d", x, w, **depthwise))
    with B.mkldnn.flags(enabled=False):
        row("conv2d under mkldnn.flags(enabled=False)", B.explain("conv2d", x, w, **depthwise))
    backplane.use_deterministic_algorithms(True)
    try:
        row("conv2d under use_deterministic_algorithms(True)", B.explain("conv2d", x, w, **depthwise))
    finally:
        backplane.use_deterministic_algorithms(False)

    signal = rng.standard_normal(4096).astype(np.complex64)
    B.cpu.fft_plan_cache.clear()
    backplane.fft.fft(signal)
    row(f"fft of 4096 (plan cache now holds {B.cpu.fft_plan_cache.size})", B.explain("fft", signal))

    spd = rng.standard_normal((64, 64))
    spd = spd @ spd.T + 64 * np.eye(64)
    row("linalg.cholesky 64x64, default", B.explain("linalg.cholesky", spd))
    with B.implementations("linalg", "builtin"):
        row("linalg.cholesky under implementations('linalg', 'builtin')", B.explain("linalg.cholesky", spd))

    ops = [rng.standard_normal(s).astype(np.float32) for s in ((8, 64), (64, 64), (64, 2))]
    for enabled in (True, False):
        B.opt_einsum.enabled = enabled
        note = B.explain("einsum", "ij,jk,kl->il", *ops).notes[0]
        path = note[note.index("follows ") + 8:note.index("]") + 1]
        cost = note[note.index("path cost ") + 10:].split(" ")[0]
        print(f"  einsum ij,jk,kl->il, opt_einsum.enabled = {enabled!s:<5}  path {path:<17} -> {cost} FLOPs")
    B.opt_einsum.enabled = True

    lstm = backplane.nn.LSTM(16, 32, num_layers=2)
    lstm.flatten_parameters()
    seq = rng.standard_normal((10, 4, 16)).astype(np.float32)
    row("LSTM(16, 32, num_layers=2) after flatten_parameters()", B.explain("rnn", lstm, seq))
    with B.implementations("rnn", "ref"):
        row("LSTM under implementations('rnn', 'ref')", B.explain("rnn", lstm, seq))

    mha = backplane.nn.MultiheadAttention(64, 4, batch_first=True)
    tokens = rng.standard_normal((2, 10, 64)).astype(np.float32)
    mha.eval()
    row("MultiheadAttention in eval mode (the fast path)", B.explain("mha", mha, tokens, tokens, tokens))
    mha.train()
    print(f"  ... in training mode, why not the fast path: {B.mha.why_not_fast_path(mha, tokens, tokens, tokens)}")

    dense = rng.standard_normal((64, 128)).astype(np.float32)
    sparse_w = backplane.sparse.to_sparse_semi_structured(dense, prune=True)
    row("linear with a 2:4 sparse weight", B.explain("linear", rng.standard_normal((16, 128)).astype(np.float32),
                                                        sparse_w))

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
