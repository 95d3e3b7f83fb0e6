"""backplane.nn.functional.scaled_dot_product_attention against the NumPy float64 oracle (sdpa_oracle.py):
mask kinds, causal with L <, =, > S, GQA, head sizes and lengths (seeded sample), non-contiguous
inputs, dtypes, each implementation forced, knob choices, reasons, errors, can_use_flash_attention."""

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

IMPLS = ["flash:cpu", "efficient:cpu", "math:any"]
DTYPES = {"float32": (np.float32, 2e-5), "float64": (np.float64, 1e-10),
          "float16": (np.float16, 3e-3), "bfloat16": (ml_dtypes.bfloat16, 2e-2)}
RNG = np.random.default_rng(0)


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def check(got, want, tol):
    got = np.asarray(got.numpy(), np.float64)
    assert got.shape == want.shape
    assert np.abs(got - want).max(initial=0) <= tol


def cases():
    """A seeded pairwise sample of head sizes, lengths, GQA ratios and mask kinds."""
    rng = np.random.default_rng(3)
    heads, lens, ratios = [1, 8, 63, 64, 128, 200, 256], [1, 17, 63, 64, 65, 1000], [1, 2, 4]
    masks = ["none", "bool", "float", "broadcast", "causal"]
    out = []
    for i, (e, l) in enumerate((e, l) for e in heads for l in lens):
        s = int(rng.choice(lens))
        out.append((e, l, s, ratios[i % 3], masks[i % 5]))
    return out


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_every_implementation_matches_the_oracle(impl, dtype):
    np_dtype, tol = DTYPES[dtype]
    with backends.implementations("sdpa", impl):
        for e, l, s, ratio, mask_kind in cases():
            if dtype != "float32" and (e > 64 or max(l, s) == 1000):
                continue  # f32 covers the big cases; keeps the suite short
            hkv = 2 if ratio == 1 else 1
            q, k, v = rand((1, hkv * ratio, l, e), np_dtype), rand((1, hkv, s, e), np_dtype), rand((1, hkv, s, e), np_dtype)
            mask = {"none": None, "causal": None, "bool": RNG.random((1, hkv * ratio, l, s)) < 0.7,
                    "float": rand((1, hkv * ratio, l, s), np_dtype), "broadcast": RNG.random((l, s)) < 0.7}[mask_kind]
            causal = mask_kind == "causal"
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, enable_gqa=ratio > 1)
            assert isinstance(out, backplane.Tensor) and out.dtype == dtype
            check(out, oracle(q, k, v, mask, causal, gqa=ratio > 1), tol)


NAN_CASES = {  # name: (tensor, index, value); the mask is additive, (L, S) = (5, 7)
    "nan in q": ("q", (0, 1, 1, 3), np.nan),
    "nan in k": ("k", (0, 0, 2, 0), np.nan),
    "nan in v": ("v", (0, 1, 4, 1), np.nan),
    "inf in q": ("q", (0, 0, 2, 5), np.inf),
    "all-nan mask row": ("m", (3, slice(None)), np.nan),
    "one nan in a mask row": ("m", (2, 6), np.nan),
    "inf mask entry": ("m", (1, 3), np.inf),
    "fully masked row": ("m", (0, slice(None)), -np.inf),
}


# Note [NaN in attention]: every implementation sends NaN and inf where the
# oracle (PyTorch's softmax) does; math:any and efficient:cpu used to write
# zeros for a row holding NaN.
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("case", list(NAN_CASES))
def test_nan_and_inf_propagate_like_the_oracle(impl, dtype, case):
    np_dtype, tol = DTYPES[dtype]
    t = {"q": rand((1, 2, 5, 8), np.float64), "k": rand((1, 2, 7, 8), np.float64),
         "v": rand((1, 2, 7, 8), np.float64), "m": rand((5, 7), np.float64)}
    where, index, value = NAN_CASES[case]
    t[where][index] = value
    q, k, v, m = (t[x].astype(np_dtype) for x in "qkvm")
    mask = m if where == "m" else None
    with backends.implementations("sdpa", impl):
        got = np.asarray(F.scaled_dot_product_attention(q, k, v, attn_mask=mask).numpy(), np.float64)
    with np.errstate(invalid="ignore"):
        want = oracle(q, k, v, mask)
    assert (np.isnan(got) == np.isnan(want)).all(), (got, want)
    finite = ~np.isnan(want)
    assert np.abs(got[finite] - want[finite]).max(initial=0) <= tol


def test_empty_head_with_the_default_scale_is_nan():
    q, k, v = np.zeros((1, 1, 3, 0), np.float32), np.zeros((1, 1, 4, 0), np.float32), rand((1, 1, 4, 5))
    assert np.isnan(F.scaled_dot_product_attention(q, k, v).numpy()).all()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("l,s", [(5, 9), (9, 9), (9, 5)])
def test_causal_is_top_left_aligned(impl, l, s):
    q, k, v = rand((2, 3, l, 16)), rand((2, 3, s, 16)), rand((2, 3, s, 16))
    with backends.implementations("sdpa", impl):
        check(F.scaled_dot_product_attention(q, k, v, is_causal=True), oracle(q, k, v, causal=True), 2e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("l,s", [(1000, 1000), (700, 450), (450, 900)])
def test_causal_flash_across_its_blocks(dtype, l, s):
    # flash:cpu's 192-query tasks over 384-key blocks: the diagonal block's products go by groups of query
    # columns (Note [Causal staircase]), the last group of a task narrower, with L <, =, > S.
    np_dtype, tol = DTYPES[dtype]
    q, k, v = rand((1, 2, l, 64), np_dtype), rand((1, 2, s, 64), np_dtype), rand((1, 2, s, 64), np_dtype)
    with backends.implementations("sdpa", "flash:cpu"):
        check(F.scaled_dot_product_attention(q, k, v, is_causal=True), oracle(q, k, v, causal=True), tol)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_non_contiguous_inputs(impl, dtype):
    np_dtype, tol = DTYPES[dtype]
    q = np.swapaxes(rand((2, 33, 4, 16), np_dtype), 1, 2)  # (B, L, H, E) storage seen as (B, H, L, E)
    k = np.swapaxes(rand((2, 40, 4, 16), np_dtype), 1, 2)
    v = np.swapaxes(rand((2, 40, 4, 32), np_dtype)[..., ::2], 1, 2)  # last-dim stride 2: flash and efficient refuse
    with backends.implementations("sdpa", impl):
        table = backends.explain("sdpa", q, k, v)
        if impl != "math:any":
            assert table.chosen is None
            assert any(r.startswith("stride:") for r in table.row(impl).reasons)
            v = np.ascontiguousarray(v)
        check(F.scaled_dot_product_attention(q, k, v), oracle(q, k, v), tol)


def test_three_d_inputs_custom_scale_and_float_mask_broadcast():
    q, k, v = rand((3, 5, 8)), rand((3, 7, 8)), rand((3, 7, 4))
    mask = rand((5, 1))  # broadcast over keys and batch
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.3)
    assert out.shape == (3, 5, 4)
    check(out, oracle(q, k, v, mask, scale=0.3), 2e-5)


def test_knobs_choose_as_the_spec_says():
    q = rand((1, 2, 8, 16))
    assert backends.explain("sdpa", q, q, q).chosen == "flash:cpu"
    with sdpa_kernel([SDPBackend.MATH]):
        table = backends.explain("sdpa", q, q, q)
        assert table.chosen == "math:any"
        assert any(r.startswith("enabled:") for r in table.row("flash:cpu").reasons)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        assert backends.explain("sdpa", q, q, q).chosen == "flash:cpu"
    # Dropout goes to math; the cuDNN / efficient flags do not matter on the CPU.
    assert backends.explain("sdpa", q, q, q, dropout_p=0.2).chosen == "math:any"
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        assert backends.explain("sdpa", q, q, q).chosen == "flash:cpu"


def test_both_disabled_is_no_viable_backend():
    q = rand((1, 1, 4, 8))
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention was found. "
                                               "This is likely due to turning off both the math kernel and "
                                               "the fused kernels."):
            F.scaled_dot_product_attention(q, q, q)


def test_nothing_acceptable_carries_every_reason():
    q = rand((2, 4, 8))  # 3-D: flash refuses
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        with pytest.raises(backends.NoImplementationError) as info:
            F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    text = str(info.value)
    assert "dropout: expected dropout_p == 0, got dropout_p 0.5" in text
    assert "dims: expected 4-D query, key and value" in text
    assert "enabled: expected math attention enabled" in text


@pytest.mark.parametrize("args,kwargs,match", [
    ((rand((1, 1, 4, 8)), rand((1, 1, 4, 8), np.float64), rand((1, 1, 4, 8))), {}, "same dtype"),
    ((rand((1, 1, 4, 8)), rand((1, 1, 4, 7)), rand((1, 1, 4, 8))), {}, "head_dim"),
    ((rand((1, 1, 4, 8)),) * 3, {"dropout_p": 1.5}, r"dropout probability in \[0, 1\]"),
    ((rand((1, 1, 4, 8)),) * 3, {"is_causal": True, "attn_mask": np.ones((4, 4), bool)}, "either attn_mask or is_causal"),
    ((rand((1, 4, 4, 8)), rand((1, 3, 4, 8)), rand((1, 3, 4, 8))), {"enable_gqa": True}, "divides the query's"),
    ((rand((8,)), rand((1, 4, 8)), rand((1, 4, 8))), {}, "at least 2 dimensions"),
    ((rand((1, 1, 4, 8)),) * 3, {"attn_mask": np.ones((4, 4), np.int32)}, "bool attn_mask"),
])
def test_bad_input_names_the_op_and_the_value(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        F.scaled_dot_product_attention(*args, **kwargs)


def test_argument_types():
    q = rand((1, 1, 4, 8))
    # PyTorch's wording for a generated binding's type error.
    with pytest.raises(TypeError, match="argument 'is_causal' must be bool, not int"):
        F.scaled_dot_product_attention(q, q, q, is_causal=1)
    with pytest.raises(TypeError, match="argument 'dropout_p' must be float, not str"):
        F.scaled_dot_product_attention(q, q, q, dropout_p="0.1")


def test_dropout_follows_the_seed():
    q, v = rand((1, 2, 16, 8)), rand((1, 2, 16, 8))
    backplane.manual_seed(3)
    a = F.scaled_dot_product_attention(q, q, v, dropout_p=0.3).numpy()
    b = F.scaled_dot_product_attention(q, q, v, dropout_p=0.3).numpy()
    backplane.manual_seed(3)
    c = F.scaled_dot_product_attention(q, q, v, dropout_p=0.3).numpy()
    assert np.array_equal(a, c) and not np.array_equal(a, b)
    assert not np.abs(F.scaled_dot_product_attention(q, q, v, dropout_p=1.0).numpy()).any()


def test_fp16_bf16_reduction_knob():
    q, k, v = (rand((1, 2, 33, 16), ml_dtypes.bfloat16) for _ in range(3))
    with backends.implementations("sdpa", "math:any"):
        exact = np.asarray(F.scaled_dot_product_attention(q, k, v).numpy(), np.float64)
        saved = cuda.fp16_bf16_reduction_math_sdp_allowed()
        cuda.allow_fp16_bf16_reduction_math_sdp(True)
        try:
            reduced = np.asarray(F.scaled_dot_product_attention(q, k, v).numpy(), np.float64)
        finally:
            cuda.allow_fp16_bf16_reduction_math_sdp(saved)
    assert 0 < np.abs(reduced - exact).max() < 5e-2
    assert np.abs(exact - oracle(q, k, v)).max() <= 2e-2


def test_can_use_flash_attention_runs_the_cpu_checks():
    q = rand((1, 2, 8, 16))
    assert cuda.can_use_flash_attention(SDPAParams(q, q, q, None, 0.0, False, False)) is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cuda.can_use_flash_attention(SDPAParams(q, q, q, None, 0.0, False, False), True) is True
    params = SDPAParams(rand((2, 8, 16)), rand((2, 8, 16)), rand((2, 8, 16)), None, 0.5, False, False)
    with pytest.warns(UserWarning) as record:
        assert cuda.can_use_flash_attention(params, True) is False
    texts = [str(w.message) for w in record]
    assert len(texts) == 2 and "dropout:" in texts[0] and "dims:" in texts[1]
    with sdpa_kernel([SDPBackend.MATH]):
        assert cuda.can_use_flash_attention(SDPAParams(q, q, q, None, 0.0, False, False)) is False
    # efficient:cpu answers for CPU tensors too (test_sdpa_efficient.py).
    assert cuda.can_use_efficient_attention(SDPAParams(q, q, q, None, 0.0, False, False)) is True


@pytest.mark.parametrize("impl", ["flash:cpu", "efficient:cpu"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_decode_shaped_gqa_across_key_blocks(impl, dtype):
    # One query row per head, 8 query heads per key/value head (folded into 8
    # rows), key lengths one short of, at and past the key blocks (256 and
    # 384), D = 128; a NaN in one key reaches exactly the heads that see it.
    np_dtype, tol = DTYPES[dtype]
    with backends.implementations("sdpa", impl):
        for S in (255, 256, 257, 383, 385, 1000):
            q, k, v = rand((1, 16, 1, 128), np_dtype), rand((1, 2, S, 128), np_dtype), rand((1, 2, S, 128), np_dtype)
            got = np.asarray(F.scaled_dot_product_attention(q, k, v, enable_gqa=True).numpy(), np.float64)
            assert np.abs(got - oracle(q, k, v, gqa=True)).max() <= tol, S
            k[0, 1, S // 2, 5] = np.nan
            got = np.asarray(F.scaled_dot_product_attention(q, k, v, enable_gqa=True).numpy(), np.float64)
            assert np.isnan(got[0, 8:]).all() and not np.isnan(got[0, :8]).any(), S
            assert np.abs(got[0, :8] - oracle(q, k, v, gqa=True)[0, :8]).max() <= tol, S


@pytest.mark.parametrize("impl", ["flash:cpu", "efficient:cpu"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_shared_key_heads_fold_into_query_rows_in_every_layout(impl, dtype):
    # Note [Folding shared key heads into query rows]: flash:cpu and
    # efficient:cpu run the query heads of one key/value head as rows of one
    # problem where their rows continue one another, and per head elsewhere;
    # both against the oracle.
    np_dtype, tol = DTYPES[dtype]
    B, H, Hk, S, E = 2, 8, 2, 37, 16
    k, v = rand((B, Hk, S, E), np_dtype), rand((B, Hk, S, E), np_dtype)
    with backends.implementations("sdpa", impl):
        for L in (1, 5):
            q = rand((B, H, L, E), np_dtype)
            q_heads_inner = np.swapaxes(rand((B, L, H, E), np_dtype), 1, 2)   # head stride E: rows do not continue
            cases = {
                "gqa": (q, k, v, None, True),
                "gqa, heads-inner q": (q_heads_inner, k, v, None, True),
                "gqa, per-head float mask": (q, k, v, rand((B, H, L, S), np_dtype), True),
                "gqa, per-head bool mask": (q, k, v, RNG.random((B, H, L, S)) < 0.6, True),
                "gqa, mask broadcast over heads": (q, k, v, RNG.random((L, S)) < 0.6, True),
                "one key head for all (MQA)": (q, k[:, :1], v[:, :1], None, True),
            }
            for name, (qq, kk, vv, mask, gqa) in cases.items():
                out = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=mask, enable_gqa=gqa)
                want = oracle(qq, kk, vv, mask, gqa=gqa)
                got = np.asarray(out.numpy(), np.float64)
                assert got.shape == want.shape, (L, name)
                assert np.abs(got - want).max() <= tol, (L, name, np.abs(got - want).max())
            # causal stays per head; a fully masked head row is still 0
            got = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True).numpy()
            np.testing.assert_allclose(np.asarray(got, np.float64), oracle(q, k, v, causal=True, gqa=True),
                                       atol=tol, rtol=0)
            mask = np.ones((B, H, L, S), bool)
            mask[1, 3, 0] = False
            got = np.asarray(F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True).numpy(),
                             np.float64)
            assert np.all(got[1, 3, 0] == 0) and np.abs(got - oracle(q, k, v, mask, gqa=True)).max() <= tol
