"""cufft:dft on a real GPU (scripts/gpu-check): every transform kind against
NumPy at odd, prime, power-of-two and mixed sizes, every norm, strided and
batched views, 16-bit real inputs; cuda.cufft_plan_cache[0] (hits, LRU
order, max_size that evicts, clear, size 0, the work area in memory_stats);
concurrent calls from threads; torch.fft beside it where importable.
Skipped without a device."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from gpu_common import needs_torch, requires_cuda, torch  # first: it puts this checkout's package on sys.path

import backplane
import backplane.backends as B
import backplane.fft as F

pytestmark = requires_cuda

NORMS = [None, "backward", "ortho", "forward"]
RNG = np.random.default_rng(3)


def crand(shape, dtype=np.complex64):
    return (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)).astype(dtype)


def rrand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def on_gpu(x):
    return backplane.asarray(x, device="cuda")


def close(got, want, tol):
    assert got.device.startswith("cuda")
    got = np.asarray(got.to("cpu").numpy())
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    assert float(np.abs(got - want).max(initial=0)) / scale <= tol


def tol_of(dtype):
    return 1e-5 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-12


@pytest.fixture
def cache():
    c = B.cuda.cufft_plan_cache[0]
    keep = c.max_size
    c.clear()
    yield c
    c.max_size = keep
    c.clear()


@pytest.fixture(autouse=True)
def cufft_only():
    with B.implementations("fft", "cufft:dft"):
        yield


@pytest.mark.parametrize("n", [1, 2, 7, 13, 16, 97, 100, 243, 1024, 4096])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_one_dimensional_kinds_match_numpy(n, dtype):
    x = crand((3, n), dtype)
    r = x.real.copy()
    spec = crand((3, n // 2 + 1), dtype)
    wide = x.astype(np.complex128)
    tol = tol_of(dtype) * max(1, np.log2(n))
    for norm in NORMS:
        close(F.fft(on_gpu(x), norm=norm), np.fft.fft(wide, norm=norm), tol)
        close(F.ifft(on_gpu(x), norm=norm), np.fft.ifft(wide, norm=norm), tol)
        close(F.rfft(on_gpu(r), norm=norm), np.fft.rfft(r.astype(np.float64), norm=norm), tol)
        close(F.ihfft(on_gpu(r), norm=norm), np.fft.ihfft(r.astype(np.float64), norm=norm), tol)
        close(F.irfft(on_gpu(spec), n=n, norm=norm), np.fft.irfft(spec.astype(np.complex128), n=n, norm=norm), tol)
        close(F.hfft(on_gpu(spec), n=n, norm=norm), np.fft.hfft(spec.astype(np.complex128), n=n, norm=norm), tol)


@pytest.mark.parametrize("shape", [(4, 6), (5, 3, 8), (2, 64, 64), (3, 5, 7, 9)])
def test_multi_dimensional_kinds_match_numpy(shape):
    x = crand(shape, np.complex128)
    r = x.real.copy()
    spec = np.fft.rfftn(r, axes=range(-min(3, len(shape)), 0))
    dims = tuple(range(-min(3, len(shape)), 0))  # cuFFT's ranks are 1 to 3
    for norm in NORMS:
        close(F.fftn(on_gpu(x), dim=dims, norm=norm), np.fft.fftn(x, axes=dims, norm=norm), 1e-12)
        close(F.ifft2(on_gpu(x), norm=norm), np.fft.ifft2(x, norm=norm), 1e-12)
        close(F.rfftn(on_gpu(r), dim=dims, norm=norm), np.fft.rfftn(r, axes=dims, norm=norm), 1e-12)
        close(F.irfftn(on_gpu(spec), s=shape[-len(dims):], dim=dims, norm=norm),
              np.fft.irfftn(spec, s=shape[-len(dims):], axes=dims, norm=norm), 1e-12)


def test_round_trips():
    x = crand((6, 40), np.complex128)
    r = x.real.copy()
    for norm in NORMS:
        close(F.ifft(F.fft(on_gpu(x), norm=norm), norm=norm), x, 1e-12)
        close(F.irfft(F.rfft(on_gpu(r), norm=norm), n=40, norm=norm), r, 1e-12)


def test_strided_and_batched_views():
    base = crand((6, 8, 10), np.complex128)
    t = on_gpu(base)
    views = [(t[:, ::2, :], base[:, ::2, :]), (t.T, base.swapaxes(-1, -2)),
             (t[1:5, 3, ::3], base[1:5, 3, ::3])]
    for tv, v in views:
        close(F.fft(tv), np.fft.fft(v), 1e-12)
        close(F.fft(tv, dim=0), np.fft.fft(v, axis=0), 1e-12)
        close(F.fftn(tv), np.fft.fftn(v), 1e-12)
        close(F.irfft(tv), np.fft.irfft(v), 1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_sixteen_bit_real_inputs(dtype):
    r = rrand((4, 64))
    t = on_gpu(r).to(dtype)
    wide = np.asarray(t.to("cpu").to("float32").numpy(), np.float64)
    got = F.rfft(t)
    assert got.dtype == "complex64"
    close(got, np.fft.rfft(wide), 1e-5)
    close(F.fft(t), np.fft.fft(wide), 1e-5)


def test_rank_above_three_is_refused_with_a_reason():
    x = on_gpu(crand((2, 2, 2, 2)))
    rows = {row.implementation: row for row in B.explain("fftn", x)}
    assert rows["cufft:dft"].status == "rejected"
    assert any("1 to 3 transform dims" in reason for reason in rows["cufft:dft"].reasons)


def test_plan_cache_hits_lru_and_eviction(cache):
    cache.max_size = 2
    a, b, c = (on_gpu(crand((n,))) for n in (16, 24, 32))
    misses = cache.misses
    F.fft(a), F.fft(a)
    assert cache.misses - misses == 1 and cache.size == 1
    F.fft(b), F.fft(a), F.fft(c)  # b is the least recently used: evicted
    assert cache.size == 2
    misses = cache.misses
    F.fft(a), F.fft(c)
    assert cache.misses == misses
    F.fft(b)
    assert cache.misses == misses + 1
    cache.max_size = 1
    assert cache.size == 1
    cache.clear()
    assert cache.size == 0


def test_plan_cache_size_zero_disables(cache):
    cache.max_size = 0
    x = crand((100,))
    misses = cache.misses
    for _ in range(3):
        close(F.fft(on_gpu(x)), np.fft.fft(x.astype(np.complex128)), 1e-5)
    assert cache.size == 0 and cache.misses - misses == 3


def test_plan_cache_byte_bound(cache):
    for n in (1 << 16, 1 << 18, 1 << 20):
        F.fft(on_gpu(crand((n,))))
    held = cache.bytes
    if held < 2:
        pytest.skip("cuFFT asked for no work area")
    cache.max_bytes = held // 2
    try:
        assert cache.bytes <= held // 2 and cache.size < 3
    finally:
        cache.max_bytes = 0
    with pytest.raises(RuntimeError, match="non-negative"):
        cache.max_bytes = -1


def test_work_areas_show_in_memory_stats(cache):
    before = backplane.memory_stats()["cuda:0"]["plan_bytes"]
    F.fftn(on_gpu(crand((8, 256, 256))), dim=(-2, -1))
    assert backplane.memory_stats()["cuda:0"]["plan_bytes"] == before + cache.bytes
    cache.clear()
    assert backplane.memory_stats()["cuda:0"]["plan_bytes"] == before


def test_concurrent_calls_from_threads(cache):
    cache.max_size = 3  # fewer than the problems: plans are evicted while others run
    problems = [crand((4, n)) for n in (12, 17, 64, 100, 243, 256)]
    wants = [np.fft.fft(x.astype(np.complex128)) for x in problems]
    tensors = [on_gpu(x) for x in problems]

    def work(i):
        k = (i * 5) % len(problems)
        got = np.asarray(F.fft(tensors[k]).to("cpu").numpy())
        return float(np.abs(got - wants[k]).max() / np.abs(wants[k]).max())

    with ThreadPoolExecutor(6) as pool:
        assert max(pool.map(work, range(120))) < 1e-5


def test_explain_reports_the_cache():
    notes = B.explain("fft", on_gpu(crand((64,)))).notes
    assert any("cuda.cufft_plan_cache[0]" in n for n in notes), notes


@needs_torch
def test_matches_torch_fft():
    x = crand((4, 4096))
    got = np.asarray(F.fft(on_gpu(x)).to("cpu").numpy())
    want = torch.fft.fft(torch.from_numpy(x).cuda()).cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
