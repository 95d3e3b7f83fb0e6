"""cudnn:sdpa and math:cuda on a real GPU (scripts/gpu-check), against the
fp64 NumPy oracle of the CPU tests (tests/python/sdpa_oracle.py) and, where importable,
torch.nn.functional.scaled_dot_product_attention. Skipped without a GPU."""

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))  # the shared SDPA oracle

import backplane  # noqa: E402
import backplane.backends as B  # noqa: E402
from backplane.nn.attention import SDPAParams, SDPBackend, sdpa_kernel  # noqa: E402
from backplane.nn.functional import scaled_dot_product_attention as sdpa  # noqa: E402
from sdpa_oracle import oracle  # noqa: E402

pytestmark = pytest.mark.skipif(not backplane.cuda.is_available(),
                                reason=f"no CUDA device: {backplane.cuda.unavailable_reason()}")

TOL = {"float32": 2e-4, "float64": 1e-10, "float16": 1e-2, "bfloat16": 4e-2}


def on_gpu(x, dtype):
    return backplane.asarray(np.ascontiguousarray(x), device="cuda").to(dtype)


def host(t):
    return np.asarray(t.to("cpu").to("float64").numpy())


def rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def rounded(x, dtype):
    """x as the GPU sees it after the cast to dtype, back in float64."""
    return host(on_gpu(x, dtype))


def check(out, q, k, v, dtype, **kw):
    ref = oracle(rounded(q, dtype), rounded(k, dtype), rounded(v, dtype), gqa=True, **kw)
    np.testing.assert_allclose(host(out), ref, rtol=TOL[dtype], atol=TOL[dtype])


CASES = [  # B, Hq, Hkv, L, S, E, Ev
    (1, 2, 2, 1, 17, 64, 64), (2, 4, 4, 65, 63, 64, 64), (1, 8, 2, 128, 128, 128, 128), (2, 2, 1, 100, 300, 64, 64)]


def problem(case, mask_kind):
    """q, k, v and mask on the host, and the sdpa keywords (mask on the GPU) for one case."""
    b, hq, hk, L, S, E, Ev = case
    q, k, v = rand((b, hq, L, E), 1), rand((b, hk, S, E), 2), rand((b, hk, S, Ev), 3)
    mask = None
    if mask_kind == "bool":
        mask = np.random.default_rng(4).random((b, 1, L, S)) < 0.7
        mask[..., 0] = True  # cuDNN's bool masks are -65504, not -inf: keep every row alive
    elif mask_kind == "float":
        mask = rand((L, S), 5)
    kw = dict(attn_mask=None if mask is None else backplane.asarray(mask, device="cuda"),
              is_causal=mask_kind == "causal", enable_gqa=hq != hk)
    return q, k, v, mask, kw


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal"])
def test_math_cuda_matches_the_oracle(dtype, case, mask_kind):
    q, k, v, mask, kw = problem(case, mask_kind)
    with B.implementations("sdpa", "math:cuda"):
        out = sdpa(on_gpu(q, dtype), on_gpu(k, dtype), on_gpu(v, dtype), **kw)
    assert out.device.startswith("cuda") and out.dtype == dtype
    check(out, q, k, v, dtype, mask=mask, causal=mask_kind == "causal")


def test_math_cuda_gives_zero_for_fully_masked_rows():
    q, k = rand((1, 2, 9, 16), 20), rand((1, 2, 12, 16), 21)
    mask = np.random.default_rng(22).random((1, 2, 9, 12)) < 0.6
    mask[0, 1, 4] = False  # one row attends to nothing
    with B.implementations("sdpa", "math:cuda"):
        out = sdpa(on_gpu(q, "float32"), on_gpu(k, "float32"), on_gpu(k, "float32"),
                   attn_mask=backplane.asarray(mask, device="cuda"))
    got = host(out)
    assert (got[0, 1, 4] == 0).all()
    np.testing.assert_allclose(got, oracle(q, k, k, mask=mask), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal"])
def test_cudnn_sdpa_matches_the_oracle(dtype, case, mask_kind):
    q, k, v, mask, kw = problem(case, mask_kind)
    args = (on_gpu(q, dtype), on_gpu(k, dtype), on_gpu(v, dtype))
    params = SDPAParams(*args, kw["attn_mask"], 0.0, kw["is_causal"], kw["enable_gqa"])
    if not B.cuda.can_use_cudnn_attention(params, debug=True):
        pytest.skip("cuDNN attention refuses this problem here (reasons warned above)")
    with B.implementations("sdpa", "cudnn:sdpa"):
        out = sdpa(*args, **kw)
    # cuDNN adds a float mask as a bias in the input dtype: the oracle gets it rounded the same way.
    ref_mask = rounded(mask, dtype) if mask_kind == "float" else mask
    check(out, q, k, v, dtype, mask=ref_mask, causal=mask_kind == "causal")


@pytest.mark.parametrize("impl", ["math:cuda", "cudnn:sdpa"])
def test_strided_bshd_views_from_torch(impl):
    torch = pytest.importorskip("torch")
    x = rand((2, 96, 4, 64), 6)  # (B, S, H, E), attended as the (B, H, S, E) view: no copy
    view = torch.from_numpy(x).cuda().half().transpose(1, 2)
    q = backplane.from_dlpack(view)
    assert not view.is_contiguous()
    with B.implementations("sdpa", impl):
        out = sdpa(q, q, q)
    xt = np.swapaxes(rounded(x, "float16"), 1, 2)
    np.testing.assert_allclose(host(out), oracle(xt, xt, xt), rtol=1e-2, atol=1e-2)


def test_math_cuda_takes_a_head_dim_slice_with_stride_2():
    torch = pytest.importorskip("torch")
    x = rand((1, 2, 24, 32), 23)
    q = backplane.from_dlpack(torch.from_numpy(x).cuda()[..., ::2])  # last-dim stride 2: no unit stride
    with B.implementations("sdpa", "math:cuda"):
        out = sdpa(q, q, q)
    xs = x[..., ::2]
    np.testing.assert_allclose(host(out), oracle(xs, xs, xs), rtol=2e-4, atol=2e-4)


def test_math_cuda_dropout_drops_what_the_cpu_drops():
    q, k, v = rand((1, 2, 33, 16), 7), rand((1, 2, 40, 16), 8), rand((1, 2, 40, 16), 9)
    backplane.manual_seed(1234)
    with B.implementations("sdpa", "math:any"):
        cpu = sdpa(backplane.asarray(q), backplane.asarray(k), backplane.asarray(v), dropout_p=0.3)
    backplane.manual_seed(1234)
    with B.implementations("sdpa", "math:cuda"):
        gpu = sdpa(on_gpu(q, "float32"), on_gpu(k, "float32"), on_gpu(v, "float32"), dropout_p=0.3)
    np.testing.assert_allclose(host(gpu), np.asarray(cpu.numpy(), np.float64), rtol=1e-4, atol=1e-5)


def test_cudnn_dropout_runs_and_changes_the_result():
    q = on_gpu(rand((1, 2, 64, 64), 10), "float16")
    params = SDPAParams(q, q, q, None, 0.25, False, False)
    if not B.cuda.can_use_cudnn_attention(params, debug=True):
        pytest.skip("cuDNN attention with dropout refused here")
    with B.implementations("sdpa", "cudnn:sdpa"):
        plain = host(sdpa(q, q, q))
        dropped = host(sdpa(q, q, q, dropout_p=0.25))
    assert np.isfinite(dropped).all() and not np.allclose(plain, dropped)


def test_priority_order_and_the_cudnn_flag_choose():
    q = on_gpu(rand((1, 2, 64, 64), 11), "float16")
    if not B.cuda.can_use_cudnn_attention(SDPAParams(q, q, q, None, 0.0, False, False)):
        pytest.skip("cuDNN attention not usable here")
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH], set_priority=True):
        assert B.explain("sdpa", q, q, q).chosen == "cudnn:sdpa"
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION], set_priority=True):
        assert B.explain("sdpa", q, q, q).chosen == "math:cuda"
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH], set_priority=True):
        B.cuda.enable_cudnn_sdp(False)
        try:
            table = B.explain("sdpa", q, q, q)
            assert table.chosen == "math:cuda"
            assert any(r.startswith("enabled:") for r in table.row("cudnn:sdpa").reasons)
        finally:
            B.cuda.enable_cudnn_sdp(True)


def test_deterministic_mode_excludes_cudnn_and_warn_only_keeps_it():
    q = on_gpu(rand((1, 2, 64, 64), 12), "float16")
    if not B.cuda.can_use_cudnn_attention(SDPAParams(q, q, q, None, 0.0, False, False)):
        pytest.skip("cuDNN attention not usable here")
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH], set_priority=True):
        backplane.use_deterministic_algorithms(True)
        try:
            table = B.explain("sdpa", q, q, q)
            assert table.chosen != "cudnn:sdpa"
            assert any(r.startswith("deterministic:") for r in table.row("cudnn:sdpa").reasons)
            backplane.use_deterministic_algorithms(True, warn_only=True)
            assert B.explain("sdpa", q, q, q).chosen == "cudnn:sdpa"
        finally:
            backplane.use_deterministic_algorithms(False)


def test_float32_goes_to_math_cuda_with_the_dtype_reason():
    q = on_gpu(rand((1, 2, 16, 64), 13), "float32")
    table = B.explain("sdpa", q, q, q)
    assert table.chosen == "math:cuda"
    assert any(r.startswith("dtype:") for r in table.row("cudnn:sdpa").reasons)


def test_no_viable_backend_on_cuda_when_all_four_are_off():
    q = on_gpu(rand((1, 1, 4, 8), 14), "float16")
    flags = ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_math_sdp", "enable_cudnn_sdp")
    for f in flags:
        getattr(B.cuda, f)(False)
    try:
        with pytest.raises(RuntimeError, match="No viable backend"):
            sdpa(q, q, q)
    finally:
        for f in flags:
            getattr(B.cuda, f)(True)


def test_side_by_side_with_torch():
    torch = pytest.importorskip("torch")
    q, k, v = rand((2, 8, 256, 64), 15), rand((2, 8, 256, 64), 16), rand((2, 8, 256, 64), 17)
    tq, tk, tv = (torch.from_numpy(x).cuda().half() for x in (q, k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True).float().cpu().numpy()
    for impl in ("math:cuda", "cudnn:sdpa"):
        gq, gk, gv = (on_gpu(x, "float16") for x in (q, k, v))
        if impl == "cudnn:sdpa" and not B.cuda.can_use_cudnn_attention(SDPAParams(gq, gk, gv, None, 0.0, True, False)):
            continue
        with B.implementations("sdpa", impl):
            out = host(sdpa(gq, gk, gv, is_causal=True))
        np.testing.assert_allclose(out, ref, rtol=1e-2, atol=1e-2, err_msg=impl)
