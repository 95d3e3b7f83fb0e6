"""Conv's per-problem default order (Note [Conv default order], src/ops/conv/
order.h; docs/dispatch.md's conv section): each rule moves what it documents
first, explain says which rule applied, and every knob still decides what is
acceptable: the rank only reorders."""

import ml_dtypes
import numpy as np
import pytest

import backplane
from backplane import _C, backends
import conv_oracle
from conftest import first_available, onednn_has_bf16, run_python

F = backplane.nn.functional
RNG = np.random.default_rng(11)

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def nhwc(arr):
    return np.ascontiguousarray(arr.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


# 3x3 stride 1: 64 tiles of 4x4 (8 x 8 per image), 32 channels: Winograd's rule.
XW, WW = rand(1, 32, 32, 32), rand(32, 32, 3, 3)
# NCHW 1x1 stride 1: im2col's rule (channels-last, 200 points: its few-points rule).
X1, W1 = rand(2, 32, 10, 10), rand(16, 32, 1, 1)
# channels-last 1x1 over 800 output points: no rule, oneDNN.
XB = rand(2, 32, 20, 20)
# channels-last 1x1 with c_in 2048 over 49 points: im2col's channels-last rule.
XL, WL = nhwc(rand(1, 2048, 7, 7)), rand(64, 2048, 1, 1)


def explain(x, w, **kw):
    return backends.explain("conv2d", x, w, **kw)


def order_note(table):
    notes = [n for n in table.notes if n.startswith("default order:")]
    assert len(notes) == 1, table.notes
    return notes[0]


def first_direct():
    return first_available("conv", "direct:")


def test_the_list_itself_is_unchanged():
    names = [i.name for i in backends.list_implementations("conv")]
    assert names[0] == "onednn:conv" and names[-1] == "ref:any"


def test_winograd_leads_3x3_unit_stride_layers_with_enough_tiles_and_channels():
    for x in (XW, nhwc(XW)):
        t = explain(x, WW, padding=1)
        assert t.chosen == "winograd:f4x3" and t.how == "first acceptable"
        assert "winograd:f4x3 first" in order_note(t) and "64 output tiles" in order_note(t)
    np.testing.assert_allclose(F.conv2d(XW, WW, padding=1).numpy(),
                               _reference(XW, WW, padding=1), rtol=1e-4, atol=1e-4)


@pytest.fixture
def weight_cache_bounds():
    """Restores cpu.conv_weight_cache's bounds (the Winograd rule reads them)."""
    cache = backends.cpu.conv_weight_cache
    saved = cache.max_size, cache.max_bytes
    yield cache
    cache.max_size, cache.max_bytes = saved
    cache.clear()


def test_winograd_leads_from_few_tiles_when_its_weight_transform_is_cached():
    # The default: cpu.conv_weight_cache keeps the transform, so 8 tiles are enough.
    t = explain(rand(1, 32, 12, 12), WW, padding=1)  # 9 tiles
    assert t.chosen == "winograd:f4x3" and "conv_weight_cache keeps" in order_note(t)
    assert explain(rand(1, 256, 14, 14), rand(256, 256, 3, 3), padding=1).chosen == "winograd:f4x3"  # 16 tiles
    assert explain(rand(1, 32, 8, 8), WW, padding=1).chosen == "onednn:conv"  # 4 tiles: below Winograd's minimum
    narrow = rand(1, 8, 32, 32)  # 8 channels
    assert explain(narrow, rand(8, 8, 3, 3), padding=1).chosen == "onednn:conv"


def test_winograd_does_not_lead_below_its_thresholds_when_transforming_every_call(weight_cache_bounds):
    for off in ({"max_size": 0}, {"max_bytes": 1024}):  # caching off, or the entry over the byte bound
        weight_cache_bounds.max_size, weight_cache_bounds.max_bytes = 256, 256 << 20
        for attr, value in off.items():
            setattr(weight_cache_bounds, attr, value)
        few_tiles = rand(1, 32, 12, 12)                 # 9 tiles
        assert explain(few_tiles, WW, padding=1).chosen == "onednn:conv"
        assert "the list's" in order_note(explain(few_tiles, WW, padding=1))
        # 16 or 32 tiles are too few whatever the weight (its transform dominates); 48 are enough
        assert explain(rand(1, 256, 14, 14), rand(256, 256, 3, 3), padding=1).chosen == "onednn:conv"
        assert explain(rand(2, 512, 14, 14), rand(512, 512, 3, 3), padding=1).chosen == "onednn:conv"
        t = explain(rand(3, 512, 14, 14), rand(512, 512, 3, 3), padding=1)
        assert t.chosen == "winograd:f4x3" and "off or too small" in order_note(t)
    strided = explain(XW, WW, padding=1, stride=2)  # stride 2
    assert strided.chosen == "onednn:conv"
    grouped = explain(XW, rand(32, 16, 3, 3), padding=1, groups=2)
    assert grouped.chosen == "onednn:conv"


def test_im2col_leads_nchw_1x1_and_not_channels_last_or_padded_ones():
    t = explain(X1, W1)
    assert t.chosen == "im2col:gemm" and "im2col:gemm first" in order_note(t)
    assert explain(nhwc(XB), W1).chosen == "onednn:conv"       # channels-last, 800 points: oneDNN
    assert explain(X1, W1, padding=1).chosen == "onednn:conv"  # padded 1x1
    assert explain(X1, W1, stride=2).chosen == "onednn:conv"   # strided 1x1


def test_im2col_leads_nchw_3x3_at_batch_1_with_a_narrow_last_strip():
    # 7 x 7 = 49 output points: the GEMM's last column strip of 1 goes to dot products (Note [GEMM narrow
    # last strip]) where the AVX-512 kernel runs; 4 tiles of 4x4 are too few for Winograd.
    avx512 = any(i.name == "builtin:avx512" and i.available for i in backends.list_implementations("matmul"))
    x, w = rand(1, 512, 7, 7), rand(512, 512, 3, 3)
    t = explain(x, w, padding=1)
    if avx512:
        assert t.chosen == "im2col:gemm" and "NCHW 3x3 stride 1 at batch 1 with 49 output points" in order_note(t)
    else:
        assert t.chosen == "onednn:conv" and "the list's" in order_note(t)
    assert explain(nhwc(x), w, padding=1).chosen == "onednn:conv"                       # channels-last
    assert explain(rand(2, 512, 7, 7), w, padding=1).chosen != "im2col:gemm"            # a batch: shared weight
    assert explain(rand(1, 64, 7, 7), rand(64, 64, 3, 3), padding=1).chosen == "onednn:conv"  # small weight
    assert explain(rand(1, 512, 8, 8), w, padding=1).chosen == "onednn:conv"            # 64 points: 48 + 16
    assert explain(x.astype(ml_dtypes.bfloat16), w.astype(ml_dtypes.bfloat16), padding=1).chosen != "im2col:gemm"
    np.testing.assert_allclose(F.conv2d(x, w, padding=1).numpy(), _reference(x, w, padding=1), rtol=1e-4, atol=2e-3)


def test_im2col_leads_channels_last_1x1_with_a_long_reduction():
    t = explain(XL, WL)
    assert t.chosen == "im2col:gemm" and "channels-last 1x1 stride 1 with c_in 2048" in order_note(t)
    assert explain(nhwc(rand(1, 512, 28, 28)), rand(64, 512, 1, 1)).chosen == "onednn:conv"  # shorter reduction
    t = explain(nhwc(rand(1, 512, 7, 7)), rand(64, 512, 1, 1))          # ... over 49 points: few rows
    assert t.chosen == "im2col:gemm" and "over 49 output points <= 512" in order_note(t)
    assert explain(nhwc(rand(1, 512, 23, 23)), rand(64, 512, 1, 1)).chosen == "onednn:conv"  # 529 points
    # A narrow output from a wide input has no rule (oneDNN level or ahead on MobileNet-V2's 144 -> 24).
    assert explain(nhwc(rand(1, 144, 32, 32)), rand(24, 144, 1, 1)).chosen == "onednn:conv"
    assert explain(nhwc(rand(2, 32, 24, 24)), rand(16, 32, 1, 1)).chosen == "onednn:conv"  # narrow input too


def test_direct_leads_nchw_depthwise_and_many_channels_last_points():
    wide = rand(8, 64, 64, 64)                      # NCHW, output rows 64 wide: planes
    t = explain(wide, rand(64, 1, 3, 3), padding=1, groups=64)
    assert t.chosen == first_direct() and "NCHW depthwise, output rows 64 wide (>= 32" in order_note(t)
    mid = rand(1, 144, 56, 56)                      # rows 56 wide, a small input: planes too
    t = explain(mid, rand(144, 1, 3, 3), padding=1, groups=144)
    assert t.chosen == first_direct() and "output rows 56 wide (>= 32" in order_note(t)
    narrow = rand(2, 64, 14, 14)                    # NCHW, rows 14 wide: staged, direct
    t = explain(narrow, rand(64, 1, 3, 3), padding=1, groups=64)
    assert t.chosen == first_direct() and "output rows 14 < 32" in order_note(t)
    many = nhwc(rand(2, 8, 192, 192))               # channels-last, 73728 output points
    t = explain(many, rand(8, 1, 3, 3), padding=1, groups=8)
    assert t.chosen == first_direct() and "channels-last stride-1 depthwise over 73728" in order_note(t)
    assert explain(many, rand(8, 1, 3, 3), padding=1, stride=2, groups=8).chosen == "onednn:conv"  # strided
    assert explain(nhwc(narrow), rand(64, 1, 3, 3), padding=1, groups=64).chosen == "onednn:conv"   # 392 points
    assert explain(wide, rand(128, 1, 3, 3), padding=1, groups=64).chosen == "onednn:conv"  # multiplier 2


def test_bf16_takes_the_1x1_im2col_and_depthwise_plane_rules():
    # Note [Conv default order]: oneDNN 2.6's bf16 1x1 lost to the GEMM, and its NCHW depthwise to the
    # planes; the staged depthwise rows and channels-last depthwise stay f32's (Winograd: the next test).
    bf = ml_dtypes.bfloat16
    t = explain(X1.astype(bf), W1.astype(bf))
    assert t.chosen == "im2col:gemm" and "NCHW 1x1 stride 1" in order_note(t)
    t = explain(XL.astype(bf), WL.astype(bf))
    assert t.chosen == "im2col:gemm" and "with c_in 2048" in order_note(t)
    t = explain(nhwc(rand(1, 256, 14, 14)).astype(bf), rand(64, 256, 1, 1).astype(bf))
    assert t.chosen == "im2col:gemm" and "over 196 output points" in order_note(t)
    assert explain(nhwc(rand(1, 144, 32, 32)).astype(bf), rand(24, 144, 1, 1).astype(bf)).chosen == "onednn:conv"
    dw = explain(rand(2, 64, 14, 14).astype(bf), rand(64, 1, 3, 3).astype(bf), padding=1, groups=64)
    assert "the list's" in order_note(dw)                               # rows 14 wide: staged
    dw = explain(rand(2, 64, 28, 28).astype(bf), rand(64, 1, 3, 3).astype(bf), padding=1, stride=2, groups=64)
    assert dw.chosen == first_direct() and "stride 2, output rows 14 < 32" in order_note(dw)
    dw = explain(rand(1, 16, 40, 40).astype(bf), rand(16, 1, 3, 3).astype(bf), padding=1, groups=16)
    assert dw.chosen == first_direct() and "output rows 40 wide (>= 32" in order_note(dw)
    dw = explain(nhwc(rand(2, 8, 192, 192)).astype(bf), rand(8, 1, 3, 3).astype(bf), padding=1, groups=8)
    assert "the list's" in order_note(dw)                               # channels-last: f32's rule only
    # the results are the GEMM's, against float64
    want = np.einsum("nchw,kc->nkhw", X1.astype(bf).astype(np.float64), W1[:, :, 0, 0].astype(bf).astype(np.float64))
    got = F.conv2d(X1.astype(bf), W1.astype(bf)).numpy().astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("layout", ["nchw", "channels_last"])
def test_winograd_leads_bf16_within_its_channel_bounds_on_filled_tiles(layout):
    # Note [Conv default order]: bf16 Winograd (fp32 GEMMs, a quarter of the multiplies) led oneDNN's bf16
    # dot products at 96-192 channels with the 4x4 tiles filled; not at 64 or 256, nor on 14 x 14 images.
    if "winograd:f4x3" not in [i.name for i in backends.list_implementations("conv") if i.available]:
        pytest.skip("winograd:f4x3 not available")
    bf = ml_dtypes.bfloat16
    lay = nhwc if layout == "channels_last" else (lambda a: a)

    def chosen(n, c, hw, k, dtype=bf):
        t = explain(lay(rand(n, c, hw, hw)).astype(dtype), rand(k, c, 3, 3).astype(dtype), padding=1)
        return t.chosen, order_note(t)

    for n, c, hw, k in [(1, 96, 20, 96), (1, 128, 28, 128), (2, 192, 28, 160), (1, 96, 28, 192)]:
        impl, note = chosen(n, c, hw, k)
        assert impl == "winograd:f4x3", (n, c, hw, k, note)
        assert f"bf16 3x3 stride 1 with {c} -> {k} channels, within 96..192" in note
    for n, c, hw, k in [(1, 64, 28, 128), (1, 128, 28, 256), (1, 128, 28, 80), (8, 128, 14, 128), (1, 128, 30, 128)]:
        impl, note = chosen(n, c, hw, k)
        assert "the list's" in note, (n, c, hw, k, note)  # 64, 256 or 80 channels; 14 x 14 or 30 x 30: 77-88% filled
    # f16 takes f32's Winograd rule, not bf16's channel bounds (64 channels)
    assert chosen(1, 64, 28, 128, np.float16)[1].startswith("default order: winograd:f4x3 first (3x3 stride 1, 49")
    assert "64 output tiles" in order_note(explain(XW, WW, padding=1))  # f32 keeps its own rule
    # the results are Winograd's, against float64
    x, w = lay(rand(1, 96, 20, 20)).astype(bf), rand(96, 96, 3, 3).astype(bf)
    want = conv_oracle.conv(x.astype(np.float64), w.astype(np.float64), padding=1)
    got = F.conv2d(x, w, padding=1).numpy().astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=3e-2, atol=3e-2 * np.abs(want).max())


def test_f16_takes_winograd_or_the_gemm_for_3x3_and_the_1x1_rules():
    """f16 (oneDNN declines it on CPUs without AVX512-FP16): Winograd where its f32 rule holds, else the
    GEMM for 3x3 stride 1; the 1x1 rules as f32's, and channels-last 1x1 layers that widen their channels;
    everything else the list's order (Winograd or direct)."""
    h = np.float16
    onednn = explain(X1.astype(h), W1.astype(h)).row("onednn:conv").status
    if onednn in ("chosen", "acceptable"):
        pytest.skip("oneDNN has an f16 convolution on this CPU: the rule was measured without one")
    t = explain(rand(1, 512, 7, 7).astype(h), rand(512, 512, 3, 3).astype(h), padding=1)  # 4 tiles
    assert t.chosen == "im2col:gemm" and "f16 3x3 stride 1 with 4 output tiles" in order_note(t)
    t = explain(XW.astype(h), WW.astype(h), padding=1)  # 64 tiles
    assert t.chosen == "winograd:f4x3" and "winograd:f4x3 first" in order_note(t)
    t = explain(X1.astype(h), W1.astype(h))  # NCHW 1x1
    assert t.chosen == "im2col:gemm" and "f16 1x1 stride 1, NCHW" in order_note(t)
    t = explain(XL.astype(h), WL.astype(h))  # channels-last 1x1, c_in 2048
    assert t.chosen == "im2col:gemm" and "f16 1x1 stride 1, channels-last, 2048 -> 64 channels" in order_note(t)
    t = explain(nhwc(rand(1, 16, 24, 24)).astype(h), rand(17, 16, 1, 1).astype(h))  # widens, over 576 points
    assert t.chosen == "im2col:gemm" and "f16 1x1 stride 1, channels-last, 16 -> 17 channels" in order_note(t)
    # channels-last 1x1 over 800 points that keeps or narrows its channels, a strided 3x3, a depthwise
    # layer: the list's order
    for x, w, kw in ((nhwc(XB), W1, {}), (nhwc(XB), rand(32, 32, 1, 1), {}), (XW, WW, dict(padding=1, stride=2)),
                     (XW, rand(32, 1, 3, 3), dict(padding=1, groups=32))):
        t = explain(x.astype(h), w.astype(h), **kw)
        assert t.chosen == first_direct() and "the list's" in order_note(t)
    got = F.conv2d(X1.astype(h), W1.astype(h)).numpy()
    np.testing.assert_allclose(got.astype(np.float64), _reference(X1, W1), rtol=2e-2, atol=2e-2)
    x, w = rand(1, 16, 24, 24).astype(h), rand(17, 16, 1, 1).astype(h)
    got = F.conv2d(nhwc(x), w).numpy()
    np.testing.assert_allclose(got.astype(np.float64), _reference(x.astype(np.float32), w.astype(np.float32)),
                               rtol=2e-2, atol=2e-2)


def test_rules_apply_to_dense_f32_forward_problems_only():
    strided_input = rand(1, 32, 32, 64)[:, :, :, ::2]  # a view with W stride 2
    assert "the list's" in order_note(explain(strided_input, WW, padding=1))
    bf16 = explain(XW.astype(ml_dtypes.bfloat16), WW.astype(ml_dtypes.bfloat16), padding=1)
    # the list's order: the first row that accepts it (onednn:conv where oneDNN has bf16; not on AVX2)
    first = next(r.implementation for r in bf16 if r.status in ("chosen", "acceptable"))
    assert bf16.chosen == first and "the list's" in order_note(bf16)
    assert (first == "onednn:conv") == onednn_has_bf16()
    assert "the list's" in order_note(backends.explain("conv_transpose2d", X1, rand(32, 16, 1, 1)))


def test_knobs_still_decide_what_is_acceptable():
    # implementations(...) narrows the list; the rank orders what is left.
    with backends.implementations("conv", "onednn:conv"):
        assert explain(XW, WW, padding=1).chosen == "onednn:conv"
        assert explain(X1, W1).chosen == "onednn:conv"
    with backends.implementations("conv", "onednn", "direct"):
        assert explain(X1, W1).chosen == "onednn:conv"   # im2col is out of scope: the list's order
    # mkldnn.enabled=False / deterministic: rules unaffected; no rule → the next acceptable in the list.
    with backends.mkldnn.flags(enabled=False):
        assert explain(XW, WW, padding=1).chosen == "winograd:f4x3"
        assert explain(X1, W1).chosen == "im2col:gemm"
        assert explain(nhwc(XB), W1).chosen.startswith("direct:")
    # A NaN makes Winograd refuse (its `finite` check): oneDNN, next in the order, runs.
    bad = XW.copy()
    bad[0, 0, 0, 0] = np.nan
    t = explain(bad, WW, padding=1)
    assert t.chosen == "onednn:conv" and "winograd:f4x3 first" in order_note(t)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_winograd_refuses_a_nan_or_an_infinity_anywhere_in_its_operands(dtype):
    # Its `finite` check scans the bit patterns in blocks of 4096 elements: a bad value first, last, at
    # either side of a block edge and in a block's middle; in the input and in the weight; each 16-bit
    # exponent pattern (f16's 0x7C00, bf16's 0x7F80) and a large finite value that is not one.
    x, w = XW.astype(dtype), WW.astype(dtype)
    with backends.implementations("conv", "winograd"):
        assert explain(x, w, padding=1).chosen == "winograd:f4x3"
        big = x.copy()
        big.reshape(-1)[4095] = np.finfo(dtype).max
        assert explain(big, w, padding=1).chosen == "winograd:f4x3"
        for operand, size in ((0, x.size), (1, w.size)):
            for at in sorted({0, 4095, 4096, size // 2 + 1, size - 1}):
                for bad_value in (np.nan, np.inf, -np.inf):
                    args = [x.copy(), w.copy()]
                    args[operand].reshape(-1)[at] = bad_value
                    assert explain(*args, padding=1).chosen is None, (operand, at, bad_value)


def test_use_deterministic_algorithms_with_a_lead():
    proc = run_python(
        "import numpy as np, backplane; from backplane import backends\n"
        "x = np.ones((1, 32, 32, 32), np.float32); w = np.ones((32, 32, 3, 3), np.float32)\n"
        "s = np.ones((1, 32, 12, 12), np.float32)\n"
        "backplane.use_deterministic_algorithms(True)\n"
        "print(backends.explain('conv2d', x, w, padding=1).chosen)\n"
        "print(backends.explain('conv2d', s, w, padding=1).chosen)\n")
    assert proc.stdout.split() == ["winograd:f4x3", "winograd:f4x3"]  # onednn:conv excluded either way


def test_cpu_capability_cap_with_the_direct_lead():
    proc = run_python(
        "import numpy as np, backplane; from backplane import backends\n"
        "x = np.ones((8, 64, 64, 64), np.float32); w = np.ones((64, 1, 3, 3), np.float32)\n"
        "print(backends.explain('conv2d', x, w, padding=1, groups=64).chosen)\n", env={"ATEN_CPU_CAPABILITY": "default"})
    assert proc.stdout.strip() == "direct:generic"


def test_benchmark_limit_counts_in_the_ranked_order():
    backends.autotune_cache.clear()
    before = _C.autotune_runs()
    backends.cpu.benchmark, backends.cpu.benchmark_limit = True, 1  # restored by the conftest fixture
    F.conv2d(XW, WW, padding=1)
    table = explain(XW, WW, padding=1)
    assert _C.autotune_runs() == before + 1
    assert table.how == "autotune cache" and table.chosen == "winograd:f4x3"  # only the first (ranked) is timed


def test_the_cli_explain_shows_the_rule():
    import subprocess
    import pathlib
    exe = pathlib.Path(__file__).resolve().parents[2] / "build" / "bin" / "backplane"
    if not exe.exists():
        pytest.skip("no build/bin/backplane")
    out = subprocess.run([str(exe), "explain", "conv2d", "--n", "8", "--c-in", "64", "--c-out", "64",
                          "--channels-last", "1"], capture_output=True, text=True, check=True).stdout
    assert "winograd:f4x3         chosen" in out and "note: default order: winograd:f4x3 first" in out


def _reference(x, w, **kw):
    with backends.implementations("conv", "ref:any"):
        return F.conv2d(x, w, **kw).numpy()
