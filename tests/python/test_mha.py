"""backplane.nn.MultiheadAttention / TransformerEncoderLayer / TransformerEncoder and the op "mha":
both implementations (fastpath:cpu, composed:any) against the float64 NumPy oracle (mha_oracle.py)
for every option; every fast-path condition broken alone picks composed:any with PyTorch's reason;
masks of every kind; padding skipped (nested) equal to computing it; checkpoints with PyTorch's keys;
bad input; PyTorch itself when importable."""

import warnings

import numpy as np
import pytest

import backplane
from backplane import backends, nn
from backplane.backends import mha as mha_backend
import mha_oracle as oracle

try:  # imported at collection, before any test loads a system NCCL that PyTorch's CUDA build then clashes with
    import torch as _torch_module
except ImportError:
    _torch_module = None

RNG = np.random.default_rng(7)
TOL = {np.float32: 5e-5, np.float64: 1e-11}
IMPLS = ["fastpath:cpu", "composed:any"]


def rand(shape, dtype=np.float32, scale=1.0):
    return (RNG.uniform(-1, 1, size=shape) * scale).astype(dtype)


def close(got, want, dtype=np.float32, scale=1.0):
    got = np.asarray(got.numpy() if isinstance(got, backplane.Tensor) else got, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.allclose(got, want, rtol=0, atol=TOL[dtype] * scale, equal_nan=True), np.nanmax(np.abs(got - want))


def randomise(module, dtype=np.float32):
    """Non-trivial values in every parameter (PyTorch's init zeroes the biases and sets norms to 1)."""
    for _, p in module.named_parameters():
        p[...] = rand(p.shape, dtype, 0.5)
    return module


def chosen(module, *args, **kwargs):
    return backends.explain("mha", module, *args, **kwargs).chosen


def mha_module(E=8, H=2, dtype=np.float32, **kw):
    return randomise(nn.MultiheadAttention(E, H, dtype=dtype, **kw), dtype)


def mha_params(m):
    return dict(in_proj_weight=m.in_proj_weight, in_proj_bias=m.in_proj_bias, out_proj_weight=m.out_proj.weight,
                out_proj_bias=m.out_proj.bias, bias_k=m.bias_k, bias_v=m.bias_v, add_zero_attn=m.add_zero_attn,
                q_proj_weight=m.q_proj_weight, k_proj_weight=m.k_proj_weight, v_proj_weight=m.v_proj_weight,
                batch_first=m.batch_first)


# ---------------------------------------------------------------- MultiheadAttention against the oracle

MASKS = ["none", "bool2d", "float2d", "bool3d", "float3d", "kpm_bool", "kpm_float", "both"]


def make_masks(kind, N, H, L, S, dtype):
    am = kpm = None
    keep_one = lambda m: (m.__setitem__((..., 0), False), m)[1]  # every row attends to one key at least
    if kind in ("bool2d", "both"):
        am = keep_one(RNG.random((L, S)) < 0.4)
    if kind == "float2d":
        am = rand((L, S), dtype)
    if kind == "bool3d":
        am = keep_one(RNG.random((N * H, L, S)) < 0.4)
    if kind == "float3d":
        am = rand((N * H, L, S), dtype)
    if kind in ("kpm_bool", "both"):
        kpm = keep_one(RNG.random((N, S)) < 0.4)
    if kind == "kpm_float":
        kpm = np.where(RNG.random((N, S)) < 0.4, -np.inf, 0.0).astype(dtype)
        kpm[:, 0] = 0.5
    return am, kpm


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_self_attention_matches_the_oracle(impl, mask, dtype):
    N, L, E, H = 3, 5, 12, 4
    m = mha_module(E, H, dtype, batch_first=True).eval()
    x = rand((N, L, E), dtype)
    am, kpm = make_masks(mask, N, H, L, L, dtype)
    if impl == "fastpath:cpu" and mask in ("float2d", "float3d", "kpm_float"):  # PyTorch's MHA fast path refuses them
        assert chosen(m, x, x, x, key_padding_mask=kpm, attn_mask=am) == "composed:any"
        impl = "composed:any"
    for need, avg in [(True, True), (True, False), (False, True)]:
        with backends.implementations("mha", impl):
            out, w = m(x, x, x, key_padding_mask=kpm, attn_mask=am, need_weights=need, average_attn_weights=avg)
        want, want_w = oracle.mha(x, x, x, H, **mha_params(m), key_padding_mask=kpm, attn_mask=am,
                                  need_weights=need, average_attn_weights=avg)
        close(out, want, dtype)
        if need:
            close(w, want_w, dtype)
        else:
            assert w is None


def test_the_fast_path_is_chosen_when_every_condition_holds():
    m = mha_module(8, 2, batch_first=True).eval()
    x = rand((2, 3, 8))
    assert chosen(m, x, x, x) == "fastpath:cpu"
    assert mha_backend.why_not_fast_path(m, x, x, x) == []
    # bool masks are allowed on the fast path
    assert chosen(m, x, x, x, key_padding_mask=np.zeros((2, 3), bool), attn_mask=np.zeros((3, 3), bool)) == "fastpath:cpu"


OPTIONS = [
    dict(batch_first=False), dict(add_bias_kv=True), dict(add_zero_attn=True),
    dict(add_bias_kv=True, add_zero_attn=True), dict(kdim=5, vdim=7), dict(bias=False),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("mask", ["none", "both", "float3d"])
def test_every_module_option_matches_the_oracle(impl, opts, mask):
    N, L, S, E, H = 2, 4, 6, 8, 2
    bf = opts.get("batch_first", True)
    m = mha_module(E, H, **{**opts, "batch_first": bf}).eval()
    q = rand((N, L, E) if bf else (L, N, E))
    k = rand((N, S, m.kdim) if bf else (S, N, m.kdim))
    v = rand((N, S, m.vdim) if bf else (S, N, m.vdim))
    am, kpm = make_masks(mask, N, H, L, S, np.float32)
    if impl == "fastpath:cpu":  # cross-attention is never the fast path: composed answers
        assert chosen(m, q, k, v) == "composed:any"
        impl = "composed:any"
    with backends.implementations("mha", impl):
        out, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am, average_attn_weights=False)
    want, want_w = oracle.mha(q, k, v, H, **mha_params(m), key_padding_mask=kpm, attn_mask=am,
                              average_attn_weights=False)
    close(out, want)
    close(w, want_w)


@pytest.mark.parametrize("impl", IMPLS)
def test_unbatched_input(impl):
    E, H, L = 8, 2, 5
    m = mha_module(E, H, batch_first=True).eval()
    x = rand((L, E))
    am = RNG.random((H, L, L)) < 0.3
    am[..., 0] = False
    kpm = np.zeros(L, bool)
    kpm[-1] = True
    with backends.implementations("mha", "composed:any"):  # unbatched is never the fast path
        out, w = m(x, x, x, attn_mask=am, key_padding_mask=kpm)
    want, want_w = oracle.mha(x, x, x, H, **mha_params(m), attn_mask=am, key_padding_mask=kpm)
    close(out, want)
    close(w, want_w)
    assert "input not batched; expected query.dim() of 3 but got 2" in mha_backend.why_not_fast_path(m, x, x, x)


@pytest.mark.parametrize("impl", IMPLS)
def test_is_causal_hint_uses_the_mask(impl):
    N, L, E, H = 2, 6, 8, 2
    m = mha_module(E, H, batch_first=True).eval()
    x = rand((N, L, E))
    causal = np.triu(np.ones((L, L), bool), 1)
    want, _ = oracle.mha(x, x, x, H, **mha_params(m), attn_mask=causal)
    with backends.implementations("mha", impl):
        for need in (True, False):  # need_weights=False: SDPA's causal form, as PyTorch
            out, _ = m(x, x, x, attn_mask=causal, is_causal=True, need_weights=need)
            close(out, want)


@pytest.mark.parametrize("impl", IMPLS)
def test_non_contiguous_inputs_and_nan(impl):
    N, L, E, H = 2, 4, 8, 2
    m = mha_module(E, H, batch_first=True).eval()
    big = rand((N, L, 2 * E))
    x = big[:, :, ::2]  # strided view
    with backends.implementations("mha", impl):
        out, _ = m(x, x, x)
    close(out, oracle.mha(x, x, x, H, **mha_params(m))[0])
    y = rand((N, L, E))
    y[1, 2, 3] = np.nan
    with backends.implementations("mha", impl):
        out, _ = m(y, y, y, need_weights=False)
    got = out.numpy()
    assert np.isfinite(got[0]).all() and np.isnan(got[1]).all()  # the NaN reaches every query of its sequence


def test_fastpath_flag_off_gives_the_same_result_through_composed():
    m = mha_module(8, 2, batch_first=True).eval()
    x = rand((2, 5, 8))
    fast, _ = m(x, x, x)
    mha_backend.set_fastpath_enabled(False)
    try:
        assert chosen(m, x, x, x) == "composed:any"
        slow, _ = m(x, x, x)
    finally:
        mha_backend.set_fastpath_enabled(True)
    close(slow, fast.numpy().astype(np.float64))


def test_attention_runs_through_the_sdpa_dispatcher():
    """The SDP knobs apply to both implementations: with every sdpa implementation excluded, the call fails
    in sdpa's dispatch (need_weights=False is the path through SDPA)."""
    m = mha_module(8, 2, batch_first=True).eval()
    x = rand((2, 5, 8))
    for impl in IMPLS:
        with backends.implementations("mha", impl), backends.implementations("sdpa", "flash:cpu"), _no_flash():
            with pytest.raises(backends.NoImplementationError, match="sdpa"):
                m(x, x, x, need_weights=False)


def _no_flash():
    from backplane.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel([SDPBackend.MATH])  # flash disabled on this thread; with sdpa pinned to flash, nothing is left


# ---------------------------------------------------------------- every fast-path condition, one at a time

def _mha_cases():
    x = rand((2, 3, 8))
    y = rand((2, 3, 8))
    base = lambda **kw: mha_module(8, 2, **{"batch_first": True, **kw}).eval()
    m64 = base()
    m64.in_proj_bias = m64.in_proj_bias.astype(np.float64)
    w64 = base()
    separate = base()  # packed dims, but separate q/k/v weights (set by hand): only in_proj_weight fails
    for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
        separate.register_parameter(name, rand((8, 8)))
    separate.in_proj_weight = None
    w64.in_proj_weight = w64.in_proj_weight.astype(np.float64)
    return [
        ("fastpath_enabled", "torch.backends.mha.get_fastpath_enabled() was not True", base(), (x, x, x), {}),
        ("batched", "input not batched; expected query.dim() of 3 but got 2", base(), (x[0], x[0], x[0]), {}),
        ("self_attention", "non-self attention was used (query, key, and value are not the same Tensor)", base(),
         (x, y, y), {}),
        ("in_proj_bias_dtype", "dtypes of query (float32) and self.in_proj_bias (float64) don't match", m64,
         (x, x, x), {}),
        ("in_proj_weight", "in_proj_weight was None", separate, (x, x, x), {}),
        ("in_proj_weight_dtype", "dtypes of query (float32) and self.in_proj_weight (float64) don't match", w64,
         (x, x, x), {}),
        ("training", "training is enabled", base().train(), (x, x, x), {}),
        ("num_heads", "self.num_heads is not even", mha_module(9, 3, batch_first=True).eval(),
         (rand((2, 3, 9)),) * 3, {}),
        ("batch_first", "batch_first was not True", base(batch_first=False), (x, x, x), {}),
        ("bias_k", "self.bias_k was not None", base(add_bias_kv=True), (x, x, x), {}),
        ("add_zero_attn", "add_zero_attn was enabled", base(add_zero_attn=True), (x, x, x), {}),
        ("float_masks", "floating-point masks are not supported for fast path.", base(), (x, x, x),
         {"attn_mask": np.zeros((3, 3), np.float32)}),
        ("in_proj_bias", "in_proj_bias was None (bias=False)", base(bias=False), (x, x, x), {}),
    ]


@pytest.mark.parametrize("case", _mha_cases(), ids=lambda c: c[0])
def test_each_broken_mha_condition_picks_composed_with_its_reason(case):
    check, reason, module, args, kwargs = case
    if check == "fastpath_enabled":
        mha_backend.set_fastpath_enabled(False)
    try:
        t = backends.explain("mha", module, *args, **kwargs)
        reasons = mha_backend.why_not_fast_path(module, *args, **kwargs)
    finally:
        mha_backend.set_fastpath_enabled(True)
    assert t.chosen == "composed:any"
    row = t.row("fastpath:cpu")
    assert row.status == "rejected" and row.reasons[0] == f"{check}: {reason}"  # the first failure is PyTorch's
    assert reasons[0] == reason
    if check != "bias_k":  # bias_k comes with bias_v
        assert reasons == [reason]


def test_why_not_fast_path_lists_every_failure_in_order():
    m = mha_module(9, 3, add_bias_kv=True).train()
    x = rand((3, 2, 9))
    assert mha_backend.why_not_fast_path(m, x, x, x) == [
        "training is enabled", "self.num_heads is not even", "batch_first was not True",
        "self.bias_k was not None", "self.bias_v was not None"]


def _layer(E=8, H=2, dtype=np.float32, **kw):
    kw.setdefault("batch_first", True)
    kw.setdefault("dropout", 0.0)
    return randomise(nn.TransformerEncoderLayer(E, H, 16, dtype=dtype, **kw), dtype).eval()


def _layer_cases():
    x = rand((2, 3, 8))
    eps = _layer()
    eps.norm2.eps = 1e-3
    return [
        ("fastpath_enabled", "torch.backends.mha.get_fastpath_enabled() was not True", _layer(), (x,)),
        ("batched", "input not batched; expected src.dim() of 3 but got 2", _layer(), (x[0],)),
        ("training", "training is enabled", _layer().train(), (x,)),
        ("batch_first", "self_attn.batch_first was not True", _layer(batch_first=False), (x,)),
        ("layer_bias", "self_attn was passed bias=False", _layer(bias=False), (x,)),
        ("activation", "activation_relu_or_gelu was not True", _layer(activation=np.tanh), (x,)),
        ("norm_eps", "norm1.eps is not equal to norm2.eps", eps, (x,)),
        ("layer_num_heads", "num_head is odd", _layer(9, 3), (rand((2, 3, 9)),)),
    ]


@pytest.mark.parametrize("case", _layer_cases(), ids=lambda c: c[0])
def test_each_broken_layer_condition_picks_composed_with_its_reason(case):
    check, reason, layer, args = case
    if check == "fastpath_enabled":
        mha_backend.set_fastpath_enabled(False)
    try:
        t = backends.explain("mha", layer, *args)
        reasons = mha_backend.why_not_fast_path(layer, *args)
    finally:
        mha_backend.set_fastpath_enabled(True)
    assert t.row("fastpath:cpu").reasons[0] == f"{check}: {reason}"
    assert reasons == [reason]
    if check != "activation":  # a Python activation: neither C++ implementation runs it (the module does)
        assert t.chosen == "composed:any"


# ---------------------------------------------------------------- TransformerEncoderLayer against the oracle

@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_encoder_layer_matches_the_oracle(impl, norm_first, activation, dtype):
    N, L, E, H = 3, 5, 12, 4
    layer = _layer(E, H, dtype, norm_first=norm_first, activation=activation)
    x = rand((N, L, E), dtype)
    for mask in ["none", "bool2d", "float3d", "both", "kpm_float"]:
        am, kpm = make_masks(mask, N, H, L, L, dtype)
        with backends.implementations("mha", impl):
            out = layer(x, src_mask=am, src_key_padding_mask=kpm)
        want = oracle.encoder_layer(x, layer.state_dict(), H, activation, norm_first, 1e-5, am, kpm, True)
        close(out, want, dtype, 10)


@pytest.mark.parametrize("opts", [dict(batch_first=False), dict(bias=False), dict(layer_norm_eps=1e-3)],
                         ids=str)
def test_encoder_layer_options(opts):
    layer = _layer(8, 2, **opts)
    bf = layer.self_attn.batch_first
    x = rand((2, 4, 8) if bf else (4, 2, 8))
    want = oracle.encoder_layer(x, layer.state_dict(), 2, "relu", False, opts.get("layer_norm_eps", 1e-5),
                                batch_first=bf)
    close(layer(x), want, scale=10)
    x2 = rand((4, 8))  # unbatched
    close(layer(x2), oracle.encoder_layer(x2[None], layer.state_dict(), 2, batch_first=True,
                                          eps=opts.get("layer_norm_eps", 1e-5))[0], scale=10)


def test_encoder_layer_with_a_callable_activation():
    layer = _layer(8, 2, activation=np.tanh)
    x = rand((2, 4, 8))
    kpm = np.zeros((2, 4), bool)
    kpm[1, 3] = True
    want = oracle.encoder_layer(x, layer.state_dict(), 2, np.tanh, src_key_padding_mask=kpm, batch_first=True)
    close(layer(x, src_key_padding_mask=kpm), want, scale=10)
    with pytest.raises(backends.NoImplementationError, match="activation"):  # the op alone cannot run it
        backplane.nn._mha_ops.transformer_encoder_layer(*layer._op_call(x)[1], **layer._op_call(x)[2])


def test_encoder_layer_recognises_torch_style_activations():
    class ReLU:
        def __call__(self, t):
            return np.maximum(t, 0)

    class GELU:
        approximate = "none"

        def __call__(self, t):
            return oracle.gelu(t)

    assert _layer(activation=ReLU()).activation_relu_or_gelu == 1
    assert _layer(activation=GELU()).activation_relu_or_gelu == 2


# ---------------------------------------------------------------- padding skipped (nested)

def left_aligned_padding(N, L, lengths):
    pad = np.ones((N, L), bool)
    for n, l in enumerate(lengths):
        pad[n, :l] = False
    return pad


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_padding_skip_equals_computing_the_padding(dtype):
    N, L, E, H = 4, 7, 8, 2
    layer = _layer(E, H, dtype)
    x = rand((N, L, E), dtype)
    pad = left_aligned_padding(N, L, [7, 3, 1, 5])
    full = oracle.encoder_layer(x, layer.state_dict(), H, src_key_padding_mask=pad, batch_first=True)
    full[pad] = 0
    op = backplane.nn._mha_ops.transformer_encoder_layer
    _, args, kwargs = layer._op_call(x, None, pad, False, True)
    assert backends.explain("mha", *args, **kwargs).chosen == "fastpath:cpu"
    for impl in IMPLS:
        with backends.implementations("mha", impl):
            close(op(*args, **kwargs)[0], full, dtype, 10)


def test_padding_skip_takes_any_padding_pattern():
    """Packing keeps whichever tokens the mask keeps (left alignment is only the encoder's condition)."""
    layer = _layer()
    x = rand((2, 5, 8))
    pad = np.array([[False, True, False, True, False], [True, True, False, False, False], [True] * 5])
    x = rand((3, 5, 8))  # the third sequence is all padding: zeros out, as an empty nested component
    want = oracle.encoder_layer(x, layer.state_dict(), 2, src_key_padding_mask=pad, batch_first=True)
    want[pad] = 0
    _, args, kwargs = layer._op_call(x, None, pad, False, True)
    close(backplane.nn._mha_ops.transformer_encoder_layer(*args, **kwargs)[0], want, scale=10)


def test_encoder_takes_the_nested_path_and_pads_with_zeros():
    layer = _layer()
    enc = nn.TransformerEncoder(layer, 2).eval()
    N, L = 3, 6
    x = rand((N, L, 8))
    pad = left_aligned_padding(N, L, [6, 2, 4])
    assert enc.why_not_sparsity_fast_path(x, None, pad) == ""
    out = enc(x, src_key_padding_mask=pad).numpy()
    want = x.astype(np.float64)
    for lyr in enc.layers:
        want = oracle.encoder_layer(want, lyr.state_dict(), 2, src_key_padding_mask=pad, batch_first=True)
    want[pad] = 0
    close(out, want, scale=20)
    assert mha_backend.why_not_fast_path(enc, x, None, pad) == []
    t = backends.explain("mha", enc, x, src_key_padding_mask=pad)
    assert t.chosen == "fastpath:cpu" and "layout=0x15" in t.problem  # encoder layer, padding mask, nested
    # the same without the padding skip: valid rows agree
    mha_backend.set_fastpath_enabled(False)
    try:
        slow = enc(x, src_key_padding_mask=pad).numpy()
        assert "torch.backends.mha.get_fastpath_enabled() was not True" in mha_backend.why_not_fast_path(
            enc, x, None, pad)
    finally:
        mha_backend.set_fastpath_enabled(True)
    close(slow[~pad], want[~pad], scale=20)


def test_encoder_nested_conditions():
    x = rand((2, 4, 8))
    pad = left_aligned_padding(2, 4, [4, 2])
    enc = nn.TransformerEncoder(_layer(), 1).eval()
    assert enc.why_not_sparsity_fast_path(x, None, None) == "src_key_padding_mask was None"
    assert enc.why_not_sparsity_fast_path(x, None, pad[:, ::-1]) == \
        "mask_check enabled, and src and src_key_padding_mask was not left aligned"
    assert enc.why_not_sparsity_fast_path(x, np.zeros((4, 4), bool), pad) == \
        "src_key_padding_mask and mask were both supplied"
    assert enc.why_not_sparsity_fast_path(x[0], None, pad[0]) == \
        "input not batched; expected src.dim() of 3 but got 2"
    enc.train()
    assert enc.why_not_sparsity_fast_path(x, None, pad) == "self.layers[0] was in training mode"
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                         "encoder_layer.norm_first was True"):
        e2 = nn.TransformerEncoder(_layer(norm_first=True), 1)
    assert e2.use_nested_tensor is False
    with pytest.warns(UserWarning, match="encoder_layer.self_attn.batch_first was not True"):
        nn.TransformerEncoder(_layer(batch_first=False), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.TransformerEncoder(_layer(batch_first=False), 1, enable_nested_tensor=False)
    # a non-left-aligned mask without mask_check still skips
    enc3 = nn.TransformerEncoder(_layer(), 1, mask_check=False).eval()
    assert enc3.why_not_sparsity_fast_path(x, None, pad[:, ::-1]) == ""


def test_encoder_with_a_final_norm_and_causal_mask_detection():
    layer = _layer()
    norm = nn._mha_module.LayerNorm(8)
    enc = nn.TransformerEncoder(layer, 1, norm=norm, enable_nested_tensor=False).eval()
    x = rand((2, 4, 8))
    causal = np.triu(np.full((4, 4), -np.inf, np.float32), 1)
    want = oracle.encoder_layer(x, layer.state_dict(), 2, src_mask=causal, batch_first=True)
    want = (want - want.mean(-1, keepdims=True)) / np.sqrt(want.var(-1, keepdims=True) + 1e-5)
    close(enc(x, mask=causal), want, scale=20)


# ---------------------------------------------------------------- modules: state, checkpoints, errors

def test_parameter_names_shapes_and_initialisation():
    m = nn.MultiheadAttention(8, 2, add_bias_kv=True)
    assert {k: v.shape for k, v in m.state_dict().items()} == {
        "in_proj_weight": (24, 8), "in_proj_bias": (24,), "bias_k": (1, 1, 8), "bias_v": (1, 1, 8),
        "out_proj.weight": (8, 8), "out_proj.bias": (8,)}
    assert not m.in_proj_bias.any() and not m.out_proj.bias.any()
    bound = np.sqrt(6 / 32)
    assert np.abs(m.in_proj_weight).max() <= bound and m.in_proj_weight.std() > bound / 4
    sep = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False)
    assert {k: v.shape for k, v in sep.state_dict().items()} == {
        "q_proj_weight": (8, 8), "k_proj_weight": (8, 3), "v_proj_weight": (8, 5), "out_proj.weight": (8, 8)}
    assert sep.in_proj_weight is None and sep._qkv_same_embed_dim is False
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    assert list(layer.state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
        "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
        "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
    assert layer.training and layer.self_attn.training
    assert layer.eval() is layer and not layer.self_attn.training and not layer.linear1.training
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    assert list(enc.state_dict())[0] == "layers.0.self_attn.in_proj_weight" and len(enc.state_dict()) == 24
    assert nn.MultiheadAttention(8, 2, dtype="float64").in_proj_weight.dtype == np.float64


def test_load_state_dict_round_trip_and_errors():
    a, b = mha_module(8, 2), nn.MultiheadAttention(8, 2)
    assert b.load_state_dict({k: v.copy() for k, v in a.state_dict().items()}) == ([], [])
    for k in a.state_dict():
        assert np.array_equal(a.state_dict()[k], b.state_dict()[k])
    before = {k: v.copy() for k, v in b.state_dict().items()}
    bad = {k: v.copy() for k, v in a.state_dict().items()}
    bad["in_proj_bias"] = np.zeros(5, np.float32)
    bad["extra"] = np.zeros(1)
    del bad["out_proj.bias"]
    with pytest.raises(RuntimeError) as e:
        b.load_state_dict(bad)
    text = str(e.value)
    assert 'Missing key(s) in state_dict: "out_proj.bias"' in text and 'Unexpected key(s) in state_dict: "extra"' in text
    assert "size mismatch for in_proj_bias: copying a param with shape (5,) from checkpoint, the shape in current " \
           "model is (24,)" in text
    for k in before:  # nothing half-applied
        assert np.array_equal(before[k], b.state_dict()[k])
    del bad["in_proj_bias"]
    assert b.load_state_dict(bad, strict=False) == (["in_proj_bias", "out_proj.bias"], ["extra"])
    c = nn.MultiheadAttention(8, 2)
    c.load_state_dict({k: backplane.asarray(v) for k, v in a.state_dict().items()})  # Tensors too
    assert np.array_equal(c.in_proj_weight, a.in_proj_weight)


def test_bad_input():
    m = mha_module(8, 2, batch_first=True).eval()
    x = rand((2, 3, 8))
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):  # PyTorch's class
        nn.MultiheadAttention(8, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 1)
    with pytest.raises(ValueError, match="2 .unbatched. or 3 dims"):
        m(x[None], x[None], x[None])
    with pytest.raises(ValueError, match="the shape of the 2D attn_mask is \\[3, 4\\]"):
        m(x, x, x, attn_mask=np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match="the shape of the 3D attn_mask is \\[2, 3, 3\\]"):
        m(x, x, x, attn_mask=np.zeros((2, 3, 3), bool))
    with pytest.raises(ValueError, match="expecting key_padding_mask shape of \\[2, 3\\]"):
        m(x, x, x, key_padding_mask=np.zeros((3, 2), bool))
    with pytest.raises(ValueError, match="only bool and floating types of attn_mask are supported"):
        m(x, x, x, attn_mask=np.zeros((3, 3), np.int32))
    with pytest.raises(ValueError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(ValueError, match="value: expected the query's dtype, float32, got dtype float64"):
        m(x, x, x.astype(np.float64))
    with pytest.raises(ValueError, match="key and value of one batch and sequence length"):
        m(x, x, rand((2, 4, 8)))
    with pytest.raises(NotImplementedError, match="MultiheadAttention: dropout 0.1 in training mode"):
        nn.MultiheadAttention(8, 2, dropout=0.1)(x, x, x)
    with pytest.raises(NotImplementedError, match="TransformerEncoderLayer: dropout 0.1 in training mode"):
        nn.TransformerEncoderLayer(8, 2, 16)(x)
    # explain and why_not_fast_path still answer for a module in training mode, and the op alone refuses
    trained = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    assert mha_backend.why_not_fast_path(trained, x) == ["training is enabled"]
    with pytest.raises(backends.NoImplementationError, match="dropout: expected dropout 0 or eval mode.*got dropout "
                                                             "0.1 in training mode"):
        backplane.nn._mha_ops.transformer_encoder_layer(*trained._op_call(x)[1], **trained._op_call(x)[2])
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(1)
    with pytest.raises(ValueError, match="expected float32 or float64"):
        nn.MultiheadAttention(8, 2, dtype="int32")
    with pytest.raises(ValueError, match="expected 'cpu'"):
        nn.MultiheadAttention(8, 2, device="cuda")
    layer = _layer()
    with pytest.raises(ValueError, match="nested"):
        backplane.nn._mha_ops.transformer_encoder_layer(*layer._op_call(x, nested=True)[1],
                                                       **layer._op_call(x, nested=True)[2])
    with pytest.raises(TypeError, match="runs op 'mha'.*not 'sdpa'"):
        backends.explain("sdpa", m, x, x, x)
    with pytest.raises(TypeError, match="why_not_fast_path expects"):
        mha_backend.why_not_fast_path(object(), x)
    with pytest.raises(backends.NoImplementationError, match="dtype"):
        backplane.nn._mha_ops.multi_head_attention(x.astype(np.float16), x.astype(np.float16),
                                                   x.astype(np.float16), 2, **{
                                                       k: (v.astype(np.float16) if isinstance(v, np.ndarray) else v)
                                                       for k, v in mha_params(m).items()})


def test_cli_explain_mha(tmp_path):
    import subprocess
    import os
    exe = os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin", "backplane")
    if not os.path.exists(exe):
        pytest.skip("the CLI is not built")
    r = subprocess.run([exe, "explain", "mha", "--batch", "2", "--seq", "8", "--d-model", "16", "--heads", "2",
                        "--ffn", "32", "--arg", "training=true"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "fastpath:cpu" in r.stdout and "training: training is enabled" in r.stdout
    assert "composed:any          chosen" in r.stdout


# ---------------------------------------------------------------- PyTorch, when importable

def _torch():
    if _torch_module is None:
        pytest.skip("PyTorch is not importable here")
    return _torch_module


def test_against_pytorch_multihead_attention():
    torch = _torch()
    for opts in [dict(batch_first=True), dict(), dict(add_bias_kv=True, add_zero_attn=True), dict(kdim=5, vdim=3)]:
        m = mha_module(8, 2, **opts).eval()
        t = torch.nn.MultiheadAttention(8, 2, **opts).eval()
        t.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in m.state_dict().items()})
        bf = opts.get("batch_first", False)
        q = rand((2, 4, 8) if bf else (4, 2, 8))
        k = q if "kdim" not in opts else rand((4, 2, 5))
        v = q if "kdim" not in opts else rand((4, 2, 3))
        kpm = np.zeros((2, 4), bool)
        kpm[1, 2:] = True
        with torch.inference_mode():
            tk = torch.from_numpy(k)
            tq = torch.from_numpy(q) if k is not q else tk
            tv = tk if v is k else torch.from_numpy(v)
            want, want_w = t(tq, tk, tv, key_padding_mask=torch.from_numpy(kpm))
        out, w = m(q, k, v, key_padding_mask=kpm)
        close(out, want.numpy().astype(np.float64), scale=4)
        close(w, want_w.numpy().astype(np.float64), scale=4)


def test_against_pytorch_encoder_layer_and_nested_encoder():
    torch = _torch()
    for opts in [dict(), dict(norm_first=True), dict(activation="gelu"), dict(batch_first=False)]:
        layer = _layer(**opts)
        t = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **{"batch_first": True, **opts}).eval()
        t.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in layer.state_dict().items()})
        x = rand((3, 5, 8))
        kpm = left_aligned_padding(3, 5, [5, 2, 4]) if layer.self_attn.batch_first else None
        with torch.inference_mode():
            want = t(torch.from_numpy(x), src_key_padding_mask=None if kpm is None else torch.from_numpy(kpm))
        close(layer(x, src_key_padding_mask=kpm), want.numpy().astype(np.float64), scale=20)
    layer = _layer()
    enc = nn.TransformerEncoder(layer, 2).eval()
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    te = torch.nn.TransformerEncoder(tl, 2).eval()
    te.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in enc.state_dict().items()})
    x = rand((3, 5, 8))
    kpm = left_aligned_padding(3, 5, [5, 2, 4])
    with torch.inference_mode():
        want = te(torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(kpm)).numpy()
    close(enc(x, src_key_padding_mask=kpm), want.astype(np.float64), scale=20)


# ---------------------------------------------------------------- TransformerDecoderLayer (composed)

def _decoder(E=8, H=2, **kw):
    kw.setdefault("batch_first", True)
    kw.setdefault("dropout", 0.0)
    return randomise(nn.TransformerDecoderLayer(E, H, 16, **kw)).eval()


@pytest.mark.parametrize("opts", [dict(), dict(norm_first=True), dict(activation="gelu"), dict(batch_first=False),
                                  dict(bias=False), dict(activation=np.tanh)], ids=str)
def test_decoder_layer_matches_the_oracle(opts):
    dec = _decoder(**opts)
    bf = dec.self_attn.batch_first
    N, T, S = 2, 5, 4
    tgt, mem = rand((N, T, 8) if bf else (T, N, 8)), rand((N, S, 8) if bf else (S, N, 8))
    causal = np.triu(np.ones((T, T), bool), 1)
    mkpm = np.zeros((N, S), bool)
    mkpm[1, 2:] = True
    out = dec(tgt, mem, tgt_mask=causal, memory_key_padding_mask=mkpm, tgt_is_causal=True)
    want = oracle.decoder_layer(tgt, mem, dec.state_dict(), 2, opts.get("activation", "relu"),
                                opts.get("norm_first", False), tgt_mask=causal, memory_key_padding_mask=mkpm,
                                batch_first=bf)
    close(out, want, scale=20)


def test_decoder_layer_keys_and_errors():
    dec = nn.TransformerDecoderLayer(8, 2, 16)
    keys = list(dec.state_dict())
    assert keys[:4] == ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                        "self_attn.out_proj.bias"]
    assert keys[4:8] == ["multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                         "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias"]
    assert keys[8:] == ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight",
                        "norm1.bias", "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias"]
    with pytest.raises(NotImplementedError, match="TransformerDecoderLayer: dropout 0.1 in training mode"):
        dec(rand((3, 2, 8)), rand((3, 2, 8)))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not elu"):
        nn.TransformerDecoderLayer(8, 2, activation="elu")


def test_decoder_self_attention_takes_the_mha_fast_path():
    dec = _decoder()
    x = rand((2, 3, 8))
    assert chosen(dec.self_attn, x, x, x) == "fastpath:cpu"
    m = rand((2, 4, 8))
    assert mha_backend.why_not_fast_path(dec.multihead_attn, x, m, m) == [
        "non-self attention was used (query, key, and value are not the same Tensor)"]


def test_against_pytorch_decoder_layer():
    torch = _torch()
    for opts in [dict(), dict(norm_first=True, activation="gelu")]:
        dec = _decoder(**opts)
        t = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, **opts).eval()
        t.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in dec.state_dict().items()})
        tgt, mem = rand((2, 5, 8)), rand((2, 4, 8))
        causal = np.triu(np.ones((5, 5), bool), 1)
        with torch.inference_mode():
            want = t(torch.from_numpy(tgt), torch.from_numpy(mem), tgt_mask=torch.from_numpy(causal)).numpy()
        close(dec(tgt, mem, tgt_mask=causal), want.astype(np.float64), scale=20)


def test_many_token_blocks_and_strided_weights():
    """Over 1024 tokens the fast path copies the weights transposed once (Note [Weights transposed once]);
    weights given as strided views must come out the same."""
    layer = _layer(8, 2)
    x = rand((5, 230, 8))
    _, args, kwargs = layer._op_call(x)
    kwargs = {k: (np.ascontiguousarray(v.T).T if isinstance(v, np.ndarray) and v.ndim == 2 else v)
              for k, v in kwargs.items()}
    assert not kwargs["linear1_weight"].flags.c_contiguous
    want = oracle.encoder_layer(x, layer.state_dict(), 2, batch_first=True)
    for impl in IMPLS:
        with backends.implementations("mha", impl):
            close(backplane.nn._mha_ops.transformer_encoder_layer(*args, **kwargs)[0], want, scale=10)
