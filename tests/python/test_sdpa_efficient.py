"""efficient:cpu against the float64 NumPy oracle (sdpa_oracle.py): value head size != query head size,
masks of any broadcastable shape (bool and float), causal with L <, =, > S, GQA, lengths 1 to 300,
every dtype, non-contiguous inputs; its explain rows and can_use_efficient_attention."""

import warnings

import ml_dtypes
import numpy as np
import pytest

import backplane
from backplane import backends
from backplane.backends import cuda
from backplane.nn import functional as F
from backplane.nn.attention import SDPAParams, SDPBackend, sdpa_kernel
from sdpa_oracle import oracle

# Tolerances as in test_sdpa.py: the error of one rounding of the output, plus fp32 accumulation.
DTYPES = {"float32": (np.float32, 2e-5), "float64": (np.float64, 1e-10),
          "float16": (np.float16, 3e-3), "bfloat16": (ml_dtypes.bfloat16, 2e-2)}
RNG = np.random.default_rng(11)


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def run_efficient(q, k, v, tol, **kwargs):
    with backends.implementations("sdpa", "efficient:cpu"):
        got = F.scaled_dot_product_attention(q, k, v, **kwargs)
    want = oracle(q, k, v, kwargs.get("attn_mask"), kwargs.get("is_causal", False), gqa=kwargs.get("enable_gqa", False))
    err = np.abs(np.asarray(got.numpy(), np.float64) - want).max(initial=0)
    assert got.shape == want.shape and err <= tol, err


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("e,ev", [(64, 32), (17, 40)])
def test_value_head_size_differs(dtype, e, ev):
    np_dtype, tol = DTYPES[dtype]
    for n, s in [(1, 300), (17, 65), (65, 17), (300, 1)]:
        run_efficient(rand((1, 2, n, e), np_dtype), rand((1, 2, s, e), np_dtype), rand((1, 2, s, ev), np_dtype), tol)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(17, 1), (1, 65), (65,), (3, 17, 65), (2, 1, 17, 65), (2, 3, 1, 65)])
def test_broadcast_masks(dtype, shape):
    np_dtype, tol = DTYPES[dtype]
    q, k, v = rand((2, 3, 17, 32), np_dtype), rand((2, 3, 65, 32), np_dtype), rand((2, 3, 65, 24), np_dtype)
    run_efficient(q, k, v, tol, attn_mask=RNG.random(shape) < 0.7)
    run_efficient(q, k, v, tol, attn_mask=rand(shape, np_dtype))


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("l,s", [(17, 300), (65, 65), (300, 17), (1, 17)])
def test_causal_is_top_left_aligned(dtype, l, s):
    np_dtype, tol = DTYPES[dtype]
    run_efficient(rand((1, 2, l, 16), np_dtype), rand((1, 2, s, 16), np_dtype), rand((1, 2, s, 8), np_dtype), tol,
                  is_causal=True)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_grouped_query_attention(dtype):
    np_dtype, tol = DTYPES[dtype]
    q, k, v = rand((2, 8, 65, 32), np_dtype), rand((2, 2, 17, 32), np_dtype), rand((2, 2, 17, 48), np_dtype)
    run_efficient(q, k, v, tol, enable_gqa=True)
    run_efficient(q, k, v, tol, enable_gqa=True, attn_mask=RNG.random((8, 65, 17)) < 0.5)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_non_contiguous_inputs(dtype):
    np_dtype, tol = DTYPES[dtype]
    q = np.swapaxes(rand((2, 65, 4, 16), np_dtype), 1, 2)  # (B, L, H, E) storage seen as (B, H, L, E)
    k = np.swapaxes(rand((2, 300, 4, 16), np_dtype), 1, 2)
    v = np.swapaxes(rand((2, 300, 4, 40), np_dtype)[..., 4:28], 1, 2)
    run_efficient(q, k, v, tol)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_causal_across_query_and_key_blocks(dtype):
    # The default blocks (384 queries, 256 keys): a query block's diagonal goes by 128-key steps,
    # each for the rows that see any of it (Note [Efficient causal steps]); values with padded rows (f16 widens
    # them through F16C where the CPU has it).
    np_dtype, tol = DTYPES[dtype]
    q, k = rand((1, 2, 450, 16), np_dtype), rand((1, 2, 400, 16), np_dtype)
    v = rand((1, 2, 400, 40), np_dtype)[..., 3:27]
    for l in (450, 400, 130):
        run_efficient(q[:, :, :l], k, v, tol, is_causal=True)
    run_efficient(q, k, v, tol)


def test_explain_chooses_efficient_when_flash_refuses():
    q, k = rand((2, 2, 8, 16)), rand((2, 2, 6, 16))
    table = backends.explain("sdpa", q, k, rand((2, 2, 6, 4)))  # Ev != E
    assert table.chosen == "efficient:cpu"
    assert any(r.startswith("head_dim:") for r in table.row("flash:cpu").reasons)
    table = backends.explain("sdpa", q, k, k, RNG.random((2, 8, 6)) < 0.5)  # 3-D mask
    assert table.chosen == "efficient:cpu"
    assert any(r.startswith("mask_shape:") for r in table.row("flash:cpu").reasons)
    # The CPU rows in order (backplane_cuda's rows, when it loads, are not available or rejected here).
    cpu_rows = [r.implementation for r in table
                if not r.implementation.startswith("cudnn:") and not r.implementation.endswith(":cuda")]
    assert cpu_rows == ["flash:cpu", "efficient:cpu", "math:any"]
    assert backends.explain("sdpa", q, k, k).chosen == "flash:cpu"  # flash first when it accepts


def test_explain_rejects_efficient_when_disabled():
    q, v = rand((1, 2, 8, 16)), rand((1, 2, 8, 4))
    cuda.enable_mem_efficient_sdp(False)
    table = backends.explain("sdpa", q, q, v)
    assert table.chosen == "math:any"
    assert table.row("efficient:cpu").reasons == [
        "enabled: expected memory-efficient attention enabled (backends.cuda.enable_mem_efficient_sdp(True)), "
        "got disabled"]
    cuda.enable_mem_efficient_sdp(True)
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        assert backends.explain("sdpa", q, q, q).chosen == "efficient:cpu"
    table = backends.explain("sdpa", q, q, v, dropout_p=0.25)  # dropout stays with math
    assert table.chosen == "math:any"
    assert any(r.startswith("dropout:") for r in table.row("efficient:cpu").reasons)


def test_can_use_efficient_attention_runs_the_cpu_checks():
    q, v = rand((1, 2, 8, 16)), rand((1, 2, 8, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cuda.can_use_efficient_attention(SDPAParams(q, q, v, None, 0.0, False, False), True) is True
    assert cuda.can_use_flash_attention(SDPAParams(q, q, v, None, 0.0, False, False)) is False
    params = SDPAParams(rand((2, 8, 16)), rand((2, 8, 16)), rand((2, 8, 16)), None, 0.5, False, False)
    with pytest.warns(UserWarning) as record:
        assert cuda.can_use_efficient_attention(params, True) is False
    texts = [str(w.message) for w in record]
    assert len(texts) == 2 and "dims:" in texts[0] and "dropout:" in texts[1]
    with sdpa_kernel([SDPBackend.MATH]):
        assert cuda.can_use_efficient_attention(SDPAParams(q, q, q, None, 0.0, False, False)) is False


def test_cpu_benchmark_autotunes_sdpa_between_the_fused_kernels():
    q = rand((1, 2, 64, 16))
    backends.autotune_cache.clear()
    backends.cpu.benchmark = True
    try:
        before = backplane._C.autotune_runs()
        out = F.scaled_dot_product_attention(q, q, q)
        assert backplane._C.autotune_runs() == before + 1
        F.scaled_dot_product_attention(q, q, q)
        assert backplane._C.autotune_runs() == before + 1  # the cached winner
        table = backends.explain("sdpa", q, q, q)
        assert table.how == "autotune cache" and table.chosen in ("flash:cpu", "efficient:cpu")
        assert np.abs(np.asarray(out.numpy(), np.float64) - oracle(q, q, q)).max() <= 2e-5
    finally:
        backends.cpu.benchmark = False
        backends.autotune_cache.clear()


def test_warn_for_unfused_kernels_names_every_fused_refusal(monkeypatch):
    from backplane.nn import attention
    q = rand((1, 2, 8, 16))
    monkeypatch.setattr(attention, "WARN_FOR_UNFUSED_KERNELS", True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.scaled_dot_product_attention(q, q, q)  # flash:cpu runs: nothing to say
    with pytest.warns(UserWarning) as caught:
        F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)  # dropout: only math:any takes it
    texts = [str(w.message) for w in caught]
    assert any(t.startswith("flash:cpu not used because dropout:") for t in texts), texts
    assert any(t.startswith("efficient:cpu not used because dropout:") for t in texts), texts
    assert not any(t.startswith("math:") for t in texts)
    monkeypatch.setattr(attention, "WARN_FOR_UNFUSED_KERNELS", False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)  # off by default: silent


def test_sdpa_kernel_variadic_is_sdpa_kernel_of_a_list():
    from backplane.nn.attention import _sdpa_kernel_variadic
    q = rand((1, 2, 8, 16))
    with _sdpa_kernel_variadic(SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION):
        assert not cuda.flash_sdp_enabled() and cuda.math_sdp_enabled() and cuda.mem_efficient_sdp_enabled()
        assert backends.explain("sdpa", q, q, q).chosen == "efficient:cpu"
    assert cuda.flash_sdp_enabled()
    with pytest.raises(TypeError, match="is not an SDPBackend"):
        with _sdpa_kernel_variadic(SDPBackend.MATH, "flash"):
            pass
    assert cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()  # nothing half-applied
