"""backplane.fft against numpy.fft (the oracle), every implementation forced:
odd, prime, power-of-two and mixed sizes, every norm, padding and trimming,
the real/Hermitian size rules, round trips, strided and batched inputs, each
dtype; torch.fft's errors; the helpers; explain's plan note."""

import ml_dtypes
import numpy as np
import pytest

import backplane
from backplane import backends
import backplane.fft as F

# The CPU implementations this build has (fftw:dft only with FFTW); FAST without the reference.
IMPLS = [i.name for i in backends.list_implementations("fft") if i.available and i.backend in ("fftw", "cpu")]
FAST = [i for i in IMPLS if i != "ref:any"]
NORMS = [None, "backward", "ortho", "forward"]
RNG = np.random.default_rng(0)

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def crand(shape, dtype=np.complex128):
    return (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape)).astype(dtype)


def rrand(shape, dtype=np.float64):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def close(got, want, tol):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    err = float(np.abs(got.astype(np.complex128) - want.astype(np.complex128)).max(initial=0)) / scale
    assert err <= tol, err


def tol_of(dtype):
    return 1e-5 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-12


def forced(impl):
    return backends.implementations("fft", impl)


def np_name(name):
    return getattr(np.fft, name)


# ---------------------------------------------------------------- 1-D transforms

SIZES = [1, 2, 3, 5, 7, 8, 12, 13, 16, 30, 64, 97, 100, 128, 243, 1000, 1024]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fft_and_ifft_match_numpy(impl, n, dtype):
    x = crand((n,), dtype)
    with forced(impl):
        for name in ["fft", "ifft"]:
            for norm in NORMS:
                got = getattr(F, name)(x, norm=norm)
                assert got.dtype == np.dtype(dtype).name
                close(got, np_name(name)(x.astype(np.complex128), norm=norm), tol_of(dtype) * max(1, np.log2(n)))


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 100, 128])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_real_transforms_match_numpy(impl, n, dtype):
    cdt = np.complex64 if dtype == np.float32 else np.complex128
    x = rrand((3, n), dtype)
    spec = crand((3, n // 2 + 1), cdt)
    with forced(impl):
        for norm in NORMS:
            r = F.rfft(x, norm=norm)
            assert r.dtype == np.dtype(cdt).name and r.shape == (3, n // 2 + 1)
            close(r, np.fft.rfft(x.astype(np.float64), norm=norm), tol_of(dtype))
            close(F.ihfft(x, norm=norm), np.fft.ihfft(x.astype(np.float64), norm=norm), tol_of(dtype))
            # The Hermitian side: n points from n // 2 + 1 (numpy ignores the
            # imaginary parts of the zero and Nyquist terms, so do we).
            i = F.irfft(spec, n=n, norm=norm)
            assert i.dtype == np.dtype(dtype).name and i.shape == (3, n)
            close(i, np.fft.irfft(spec.astype(np.complex128), n=n, norm=norm), tol_of(dtype))
            close(F.hfft(spec, n=n, norm=norm), np.fft.hfft(spec.astype(np.complex128), n=n, norm=norm), tol_of(dtype))


@pytest.mark.parametrize("impl", IMPLS)
def test_default_sizes_of_the_hermitian_transforms(impl):
    spec = crand((5,))
    with forced(impl):
        assert F.irfft(spec).shape == (8,)  # 2 * (m - 1)
        assert F.hfft(spec).shape == (8,)
        close(F.irfft(spec), np.fft.irfft(spec), 1e-12)
        close(F.hfft(spec), np.fft.hfft(spec), 1e-12)
        assert F.rfft(rrand((9,))).shape == (5,)
        assert F.ihfft(rrand((10,))).shape == (6,)


@pytest.mark.parametrize("impl", IMPLS)
def test_padding_and_trimming(impl):
    x = crand((4, 10))
    with forced(impl):
        for n in [3, 10, 16, 21]:
            close(F.fft(x, n=n), np.fft.fft(x, n=n), 1e-12)
            close(F.ifft(x, n=n, dim=0), np.fft.ifft(x, n=n, axis=0), 1e-12)
            close(F.rfft(x.real, n=n), np.fft.rfft(x.real, n=n), 1e-12)
            close(F.irfft(x, n=n), np.fft.irfft(x, n=n), 1e-12)
            close(F.hfft(x, n=n, dim=0), np.fft.hfft(x, n=n, axis=0), 1e-12)


@pytest.mark.parametrize("impl", IMPLS)
def test_round_trips(impl):
    x = crand((6, 7))
    r = rrand((5, 9))
    with forced(impl):
        for norm in NORMS:
            close(F.ifft(F.fft(x, norm=norm), norm=norm), x, 1e-12)
            close(F.ifftn(F.fftn(x, norm=norm), norm=norm), x, 1e-12)
            close(F.irfft(F.rfft(r, norm=norm), n=9, norm=norm), r, 1e-12)
            close(F.irfftn(F.rfftn(r, norm=norm), s=r.shape, norm=norm), r, 1e-12)
            close(F.ihfft(F.hfft(x, n=12, norm=norm), norm=norm), np.fft.ihfft(np.fft.hfft(x, n=12, norm=norm), norm=norm), 1e-12)


# ---------------------------------------------------------------- N-D transforms

@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("shape", [(4, 6), (5, 3, 8), (2, 3, 4, 5), (1, 7)])
def test_nd_transforms_match_numpy(impl, shape):
    x = crand(shape)
    r = rrand(shape)
    with forced(impl):
        for norm in NORMS:
            close(F.fftn(x, norm=norm), np.fft.fftn(x, norm=norm), 1e-12)
            close(F.ifftn(x, norm=norm), np.fft.ifftn(x, norm=norm), 1e-12)
            close(F.fft2(x, norm=norm), np.fft.fft2(x, norm=norm), 1e-12)
            close(F.ifft2(x, norm=norm), np.fft.ifft2(x, norm=norm), 1e-12)
            close(F.rfftn(r, norm=norm), np.fft.rfftn(r, norm=norm), 1e-12)
            close(F.rfft2(r, norm=norm), np.fft.rfft2(r, norm=norm), 1e-12)
            # A Hermitian-consistent spectrum, so that every library agrees.
            spec = np.fft.rfftn(r)
            close(F.irfftn(spec, s=shape, norm=norm), np.fft.irfftn(spec, s=shape, axes=range(len(shape)), norm=norm), 1e-12)
            spec2 = np.fft.rfft2(r)
            close(F.irfft2(spec2, s=shape[-2:], norm=norm), np.fft.irfft2(spec2, s=shape[-2:], norm=norm), 1e-12)


@pytest.mark.parametrize("impl", IMPLS)
def test_s_and_dim_rules(impl):
    x = crand((4, 5, 6))
    r = rrand((4, 5, 6))
    with forced(impl):
        close(F.fftn(x, s=(3, 8)), np.fft.fftn(x, s=(3, 8), axes=(1, 2)), 1e-12)  # s alone: the last len(s) dims
        close(F.fftn(x, dim=(0, 2)), np.fft.fftn(x, axes=(0, 2)), 1e-12)
        close(F.fftn(x, s=(7, 2), dim=(2, 0)), np.fft.fftn(x, s=(7, 2), axes=(2, 0)), 1e-12)
        close(F.fftn(x, s=(-1, 9), dim=(0, 1)), np.fft.fftn(x, s=(4, 9), axes=(0, 1)), 1e-12)
        close(F.fft2(x, dim=(0, 1)), np.fft.fft2(x, axes=(0, 1)), 1e-12)
        close(F.rfftn(r, dim=(2, 0)), np.fft.rfftn(r, axes=(2, 0)), 1e-12)  # the last dim given is halved
        assert F.rfftn(r, dim=(2, 0)).shape == (3, 5, 6)
        spec = np.fft.rfftn(r, axes=(0, 1))
        close(F.irfftn(spec, s=(4, 5), dim=(0, 1)), np.fft.irfftn(spec, s=(4, 5), axes=(0, 1)), 1e-12)
        assert F.irfftn(spec, dim=(0, 1)).shape == (4, 4, 6)  # 2 * (m - 1) on the last dim given
        close(F.fft(x, dim=1), np.fft.fft(x, axis=1), 1e-12)
        close(F.fft(x, dim=-3), np.fft.fft(x, axis=0), 1e-12)


@pytest.mark.parametrize("impl", IMPLS)
def test_strided_and_batched_inputs(impl):
    base = crand((6, 8, 10))
    views = [base[:, ::2, :], base[::-1], base.transpose(2, 0, 1), base[1:5, 3, ::3], np.broadcast_to(base[:1], (4, 8, 10))]
    with forced(impl):
        for v in views:
            t = backplane.asarray(v)
            close(F.fft(t), np.fft.fft(v), 1e-12)
            close(F.fft(t, dim=0), np.fft.fft(v, axis=0), 1e-12)
            close(F.fftn(t), np.fft.fftn(v), 1e-12)
            close(F.rfft(backplane.asarray(v.real)), np.fft.rfft(v.real), 1e-12)
            close(F.irfft(t), np.fft.irfft(v), 1e-12)


@pytest.mark.parametrize("impl", IMPLS)
def test_input_dtypes(impl):
    x16 = rrand((16,), np.float16)
    xb = rrand((16,)).astype(ml_dtypes.bfloat16)
    xi = np.arange(16, dtype=np.int64)
    with forced(impl):
        for x in [x16, xb]:
            got = F.fft(x)  # computed in float32, returned as complex64
            assert got.dtype == "complex64"
            close(got, np.fft.fft(x.astype(np.float64)), 1e-5)
            assert F.rfft(x).dtype == "complex64"
        assert F.fft(xi).dtype == "complex64"  # integers as the default float dtype, as torch
        close(F.fft(xi), np.fft.fft(xi), 1e-5)
        assert F.fft(rrand((8,), np.float64)).dtype == "complex128"
        assert F.irfft(rrand((5,), np.float32)).dtype == "float32"  # a real input taken as complex
        assert F.irfft(crand((5,), np.complex128)).dtype == "float64"


REAL_DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int32]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", REAL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_entry_takes_each_real_dtype(impl, dtype):
    # 16-bit and integer inputs are computed in float32 (complex64 out), as torch on the CPU.
    x = rrand((3, 6, 10), np.float64)
    x = (x * 8).round() if np.dtype(dtype).kind == "i" else x
    x = x.astype(dtype)
    wide = x.astype(np.float64)
    cdt = "complex128" if dtype == np.float64 else "complex64"
    tol = 1e-12 if dtype == np.float64 else 1e-5
    with forced(impl):
        for name in ["fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "rfft2", "fftn", "ifftn", "rfftn"]:
            got = getattr(F, name)(x)
            assert got.dtype == cdt, (name, got.dtype)
            close(got, np_name(name)(wide), tol)
        for name in ["irfft", "hfft", "irfft2", "irfftn"]:
            got = getattr(F, name)(x)
            assert got.dtype == cdt.replace("complex128", "float64").replace("complex64", "float32"), (name, got.dtype)
            close(got, np_name(name)(wide.astype(np.complex128)), tol * 10)


@pytest.mark.parametrize("impl", FAST)
@pytest.mark.parametrize("n", [4096, 4099, 2 * 4099, 3 * 5 * 7 * 11 * 13, 2**16 + 1, 3**9])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_large_sizes_match_numpy(impl, n, dtype):
    # native:stockham: radix 4 only, Bluestein (prime and twice a prime), every
    # odd radix, Bluestein through a 2^18-point convolution, radix 3 only.
    x = crand((n,), dtype)
    with forced(impl):
        for name in ["fft", "ifft"]:
            close(getattr(F, name)(x, norm="ortho"), np_name(name)(x.astype(np.complex128), norm="ortho"),
                  tol_of(dtype) * np.log2(n))


@pytest.mark.parametrize("impl", FAST)
def test_threaded_batched_and_2d_transforms(impl):
    # Large enough to run on several threads: a batch of rows, and the columns of a matrix.
    x = crand((64, 1024), np.complex64)
    y = crand((300, 257), np.complex128)
    keep = backplane.get_num_threads()
    backplane.set_num_threads(2)
    try:
        with forced(impl):
            close(F.fft(x), np.fft.fft(x.astype(np.complex128)), 1e-5 * 10)
            close(F.fft2(y), np.fft.fft2(y), 1e-11)
            close(F.rfft2(y.real), np.fft.rfft2(y.real), 1e-11)
            close(F.irfft2(y), np.fft.irfft2(y), 1e-11)
    finally:
        backplane.set_num_threads(keep)


def test_implementations_agree_with_each_other():
    x = crand((3, 97, 12), np.complex64)
    with forced("ref:any"):
        want = F.fftn(x).numpy()
    for impl in FAST:
        with forced(impl):
            close(F.fftn(x).numpy(), want, 1e-5)


# ---------------------------------------------------------------- errors

def test_errors_name_the_argument():
    x = crand((4, 5))
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        F.fft(x, n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        F.irfft(crand((1,)))
    with pytest.raises(IndexError):
        F.fft(x, dim=2)
    with pytest.raises(IndexError):
        F.fft2(crand((4,)))
    with pytest.raises(ValueError, match="norm"):
        F.fft(x, norm="sideways")
    with pytest.raises(TypeError, match="^rfft expects a real input tensor, but got ComplexDouble$"):
        F.rfft(x)
    with pytest.raises(TypeError, match="ihfft expects a real input tensor"):
        F.ihfft(x)
    with pytest.raises(RuntimeError, match="same length"):
        F.fftn(x, s=(2, 3), dim=(0,))
    with pytest.raises(RuntimeError, match="unique"):
        F.fftn(x, dim=(0, -2))
    with pytest.raises(RuntimeError, match="at least one axis"):
        F.rfftn(rrand((3,)), dim=())
    with pytest.raises(RuntimeError, match="s: "):
        F.fftn(x, s=(2, 3, 4))
    with pytest.raises(TypeError, match="argument 'n'"):
        F.fft(x, n=2.5)
    with pytest.raises(TypeError):
        F.fft(x, 4, 0, "ortho", 1)
    with pytest.raises(TypeError, match="argument 'input' must be Tensor, not str"):
        F.fft("abc")
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(-1\)"):
        F.hfft(x, n=-1)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\)"):
        F.fftn(x, s=(0, 2))
    with pytest.raises(IndexError, match="dim"):
        F.rfftn(rrand((3, 4)), dim=(0, 5))
    with pytest.raises(ValueError, match="norm"):
        F.irfft2(x, norm="")


def test_empty_and_zero_dim_inputs():
    assert F.fft(np.zeros((0, 4), np.complex64)).shape == (0, 4)
    out = F.fftn(np.complex64(2 + 1j))  # nothing to transform: the value, complex
    assert out.shape == () and complex(out.numpy()) == 2 + 1j
    assert F.fftn(np.float32(3)).dtype == "complex64"


# ---------------------------------------------------------------- helpers

def test_fftfreq_and_rfftfreq():
    assert F.fftfreq(0).shape == (0,)
    for n in [1, 2, 5, 8]:
        close(F.fftfreq(n), np.fft.fftfreq(n), 1e-7)
        close(F.rfftfreq(n, 0.5), np.fft.rfftfreq(n, 0.5), 1e-7)
    assert F.fftfreq(4).dtype == "float32"
    assert F.fftfreq(4, dtype="float64").dtype == "float64"
    with pytest.raises(ValueError):
        F.fftfreq(-1)
    with pytest.raises(ValueError):
        F.fftfreq(4, dtype="int32")


def test_fftshift_and_ifftshift():
    for shape in [(5,), (4, 7), (2, 3, 6)]:
        x = RNG.integers(0, 100, shape)
        np.testing.assert_array_equal(F.fftshift(x).numpy(), np.fft.fftshift(x))
        np.testing.assert_array_equal(F.ifftshift(x).numpy(), np.fft.ifftshift(x))
        np.testing.assert_array_equal(F.fftshift(x, dim=0).numpy(), np.fft.fftshift(x, axes=0))
        np.testing.assert_array_equal(F.ifftshift(x, dim=(-1,)).numpy(), np.fft.ifftshift(x, axes=(-1,)))
        np.testing.assert_array_equal(F.ifftshift(F.fftshift(x)).numpy(), x)


def test_every_torch_fft_name_is_there():
    names = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
             "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
    for n in names:
        assert callable(getattr(F, n)), n
    assert str(__import__("inspect").signature(F.fft)) == "(input, n=None, dim=-1, norm=None)"
    assert str(__import__("inspect").signature(F.fftn)) == "(input, s=None, dim=None, norm=None)"
    assert str(__import__("inspect").signature(F.fft2)) == "(input, s=None, dim=(-2, -1), norm=None)"


# ---------------------------------------------------------------- explain

@pytest.mark.skipif("fftw:dft" not in IMPLS, reason="a build without FFTW")
def test_explain_says_whether_the_plan_is_cached():
    cache = backends.cpu.fft_plan_cache
    cache.clear()
    x = crand((48,), np.complex64)
    notes = backends.explain("fft", x).notes
    assert any("not cached" in n for n in notes), notes
    F.fft(x)
    notes = backends.explain("fft", x).notes
    assert any("is cached" in n and "planned in" in n for n in notes), notes
    assert backends.explain("fft", x).chosen == "fftw:dft"


def test_explain_of_hfft_names_the_conjugation():
    notes = backends.explain("hfft", crand((5,))).notes
    assert any("conjugated input" in n for n in notes)


def test_explain_shows_native_stockham_when_fftw_is_excluded():
    x = crand((6, 4099), np.complex64)
    with backends.implementations("fft", "native", "ref"):
        table = backends.explain("fft", x)
    assert table.chosen == "native:stockham"
    row = table.row("fftw:dft")  # without FFTW: "not built"
    if "fftw:dft" in IMPLS:
        assert row.status == "excluded" and "implementations(" in str(row.reasons), row.reasons
    assert any("native:stockham: 4099 points by Bluestein" in n and "16384 points" in n for n in table.notes), table.notes
    notes = backends.explain("fft", crand((1000,), np.complex64)).notes
    assert any(n == "native:stockham: 1000 points in passes of radix 4x2x5x5x5" for n in notes), notes
    names = [i.name for i in backends.list_implementations("fft")]
    assert names.index("fftw:dft") < names.index("native:stockham") < names.index("ref:any")
