"""backplane Tensor: DLPack both ways, NumPy as the oracle, views, dtypes,
threads, seed, memory statistics and every bad input."""

import ctypes
import threading

import numpy as np
import pytest

from conftest import run_python

import backplane
from backplane import _C
from backplane._tensor import Tensor, asarray, from_dlpack

ml_dtypes = pytest.importorskip("ml_dtypes")

DTYPES = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128",
          "int8", "int32", "int64", "bool"]


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def sample(name, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 10
    if name.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    if name == "bool":
        return x > 0
    return x.astype(np_dtype(name))


# ------------------------------------------------------------------ DLPack

@pytest.mark.parametrize("name", DTYPES)
def test_numpy_to_backplane_to_numpy_shares_memory(name):
    a = sample(name)
    t = asarray(a)
    assert t.dtype == name
    assert t.shape == a.shape
    assert t.device == "cpu"
    back = t.numpy()
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)
    assert np.shares_memory(back, a)


@pytest.mark.parametrize("name", [n for n in DTYPES if n != "bfloat16"])
def test_numpy_from_dlpack_consumes_our_export(name):
    a = sample(name)
    t = asarray(a)
    b = np.from_dlpack(t)
    np.testing.assert_array_equal(b, a)
    assert np.shares_memory(a, b)
    assert t.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("max_version", [None, (0, 8), (1, 0), (1, 3)])
def test_capsule_kinds(max_version):
    t = asarray(np.arange(6.0).reshape(2, 3))
    cap = t.__dlpack__(max_version=max_version)
    versioned = max_version is not None and max_version[0] >= 1
    assert ("dltensor_versioned" if versioned else "dltensor") in repr(cap)
    u = from_dlpack(cap)  # a capsule is accepted directly
    assert "used_" in repr(cap)
    np.testing.assert_array_equal(u.numpy(), np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match="unused DLPack capsule"):
        from_dlpack(cap)


def test_unconsumed_capsule_frees_its_storage():
    _C.reset_peak_memory_stats()
    before = _C.memory_stats()["cpu"]["current_bytes"]
    t = asarray(np.zeros(1000, np.float64)).to("float32")
    cap = t.__dlpack__(max_version=(1, 0))
    del t
    assert _C.memory_stats()["cpu"]["current_bytes"] == before + 4000
    del cap
    assert _C.memory_stats()["cpu"]["current_bytes"] == before


def test_import_keeps_the_producer_alive_and_releases_it():
    a = np.arange(10, dtype=np.int64)
    t = from_dlpack(a)
    del a
    np.testing.assert_array_equal(t.numpy(), np.arange(10))


def test_dlpack_copy_and_device_keywords():
    a = np.arange(4, dtype=np.float32)
    t = asarray(a)
    copied = np.from_dlpack(t, copy=True)
    assert not np.shares_memory(copied, a)
    assert np.shares_memory(np.from_dlpack(t, copy=False), a)
    assert np.shares_memory(np.from_dlpack(t, device="cpu"), a)
    with pytest.raises(BufferError, match="copy=False"):
        t.__dlpack__(dl_device=(2, 0), copy=False)
    with pytest.raises(BufferError, match="dl_device"):
        t.__dlpack__(dl_device=(7, 0))
    with pytest.raises(ValueError, match="stream=None for a cpu tensor"):
        t.__dlpack__(stream=1)


def test_read_only_numpy_stays_read_only():
    a = np.arange(5.0)
    a.flags.writeable = False
    t = asarray(a)
    assert np.shares_memory(t.numpy(), a)
    assert not t.numpy().flags.writeable


def test_second_consumer_if_available():
    torch = pytest.importorskip("torch")
    for name in DTYPES:
        a = sample(name)
        t = asarray(a)[::-1].T  # a strided view, both ways
        tt = torch.from_dlpack(t)
        assert str(tt.dtype) == "torch." + name
        assert tt.data_ptr() == t.data_ptr()
        back = asarray(tt)
        assert back.dtype == name and back.data_ptr() == t.data_ptr()
        np.testing.assert_array_equal(back.numpy(), a[::-1].T)


# ------------------------------------------------------------------ bf16

def test_bfloat16_through_ml_dtypes():
    a = np.array([1.0, -2.5, 3.140625, 1e30, np.inf], dtype=ml_dtypes.bfloat16)
    t = asarray(a)
    assert t.dtype == "bfloat16"
    b = t.numpy()
    assert b.dtype == np.dtype(ml_dtypes.bfloat16)
    assert np.shares_memory(a, b)
    np.testing.assert_array_equal(b.view(np.uint16), a.view(np.uint16))
    # Our f32 -> bf16 rounding matches ml_dtypes' on random values and ties.
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    ties = (np.arange(1, 200, dtype=np.uint32) << 16 | 0x8000).view(np.float32)
    for src in (x, ties):
        ours = asarray(src).to("bfloat16").numpy()
        np.testing.assert_array_equal(ours.view(np.uint16), src.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_bfloat16_export_as_dlpack_bfloat16():
    t = asarray(np.ones(3, np.float32)).to("bfloat16")
    cap = t.__dlpack__(max_version=(1, 0))
    assert from_dlpack(cap).dtype == "bfloat16"


# ------------------------------------------------------------------ conversions

@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_to_dtype_matches_numpy(src, dst):
    a = sample(src, (2, 5), seed=3)
    if src.startswith("complex") and not dst.startswith("complex") and dst != "bool":
        expected = a.real.astype(np_dtype(dst))  # documented: the real part
    elif np.dtype(np_dtype(src)).kind == "f" and np.dtype(np_dtype(dst)).kind == "i":
        expected = np.trunc(a.astype(np.float64)).astype(np_dtype(dst))  # values are in range
    else:
        expected = a.astype(np_dtype(dst))
    got = asarray(a).T.to(dst).numpy()
    np.testing.assert_array_equal(got, expected.T)


def test_float16_rounding_matches_numpy():
    x = np.random.default_rng(2).standard_normal(2000) * np.logspace(-9, 5, 2000)
    ours = asarray(x).to("float16").numpy()
    ours32 = asarray(x.astype(np.float32)).to("float16").numpy()
    with np.errstate(over="ignore"):  # the largest values overflow to inf, as intended
        np.testing.assert_array_equal(ours.view(np.uint16), x.astype(np.float16).view(np.uint16))
        np.testing.assert_array_equal(ours32, x.astype(np.float32).astype(np.float16))


def test_asarray_accepts_lists_scalars_and_dtype_forms():
    assert asarray([[1, 2], [3, 4]]).dtype == "int64"
    assert asarray([1.5, 2.0]).dtype == "float64"
    assert asarray(True).dtype == "bool"
    s = asarray(3.5)
    assert s.shape == () and s.numpy() == 3.5
    assert asarray([1, 2], dtype="f32").dtype == "float32"
    assert asarray([1, 2], dtype=np.float16).dtype == "float16"
    assert asarray([1, 2], dtype=ml_dtypes.bfloat16).dtype == "bfloat16"
    assert asarray([1, 2], device="cpu").device == "cpu"
    t = asarray(np.arange(3.0))
    assert asarray(t) is t
    assert t.to("float64") is t or t.to("float64").data_ptr() == t.data_ptr()
    assert t.to(dtype="half", device="cpu").dtype == "float16"


def test_array_protocol():
    t = asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(t), np.arange(6).reshape(2, 3))
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert not np.shares_memory(np.array(t, copy=True), t.numpy())
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(dtype=np.float64, copy=False)


# ------------------------------------------------------------------ views

class _BadDevice:
    """A DLPack producer whose __dlpack_device__ answers ``answer``."""

    def __init__(self, answer):
        self.answer = answer

    def __dlpack_device__(self):
        return self.answer

    def __dlpack__(self, **kwargs):
        return np.zeros(2, np.float32).__dlpack__(**kwargs)


# Note [Misaligned DLPack data]: an array at an address not aligned to its
# elements is copied to aligned memory on import.
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.complex64])
def test_misaligned_arrays_are_copied_to_aligned_memory(dtype):
    n = 12
    raw = b"\0" + (np.arange(n) - 5.5).astype(dtype).tobytes()
    a = np.frombuffer(raw, dtype=dtype, count=n, offset=1)
    assert a.ctypes.data % np.dtype(dtype).alignment != 0 or np.dtype(dtype).itemsize == 1
    t = from_dlpack(a)
    assert t.data_ptr() % np.dtype(dtype).alignment == 0
    np.testing.assert_array_equal(t.numpy(), a)
    strided = a[::3]
    np.testing.assert_array_equal(asarray(strided).numpy(), strided)
    if dtype in (np.float32, np.float64):
        m = a.reshape(3, 4)
        np.testing.assert_allclose(backplane.matmul(m, m.T).numpy(), m.astype(np.float64) @ m.T.astype(np.float64),
                                   rtol=1e-5)


def test_huge_slice_bounds_clamp_as_python_does():
    t = asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert t[2**70:].shape == (0, 4) and t[-2**70:].shape == (3, 4)
    assert t[::2**70].shape == (1, 4) and t[::-2**70].shape == (1, 4)
    np.testing.assert_array_equal(t[:, ::2**62].numpy(), t.numpy()[:, ::2**62])


def test_cpu_0_is_the_cpu():
    t = asarray([1.0, 2.0], device="cpu:0")
    assert t.device == "cpu" and t.to("cpu:0").device == "cpu" and t.to(device="cpu:0").device == "cpu"


def test_transpose_and_slicing_are_views():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = asarray(a)
    cases = [
        (lambda x: x[1], lambda y: y[1]),
        (lambda x: x[-1, ::2], lambda y: y[-1, ::2]),
        (lambda x: x[::-1, 1:3, -2], lambda y: y[::-1, 1:3, -2]),
        (lambda x: x[..., ::-2], lambda y: y[..., ::-2]),
        (lambda x: x[1, ..., 4], lambda y: y[1, ..., 4]),
        (lambda x: x[2:0:-1], lambda y: y[2:0:-1]),
        (lambda x: x[5:], lambda y: y[5:]),
        (lambda x: x[-100:100], lambda y: y[-100:100]),
        (lambda x: x[np.int64(1)], lambda y: y[1]),
    ]
    for ours, theirs in cases:
        v = ours(t)
        expected = theirs(a)
        np.testing.assert_array_equal(v.numpy(), expected)
        if v.numel():
            assert np.shares_memory(v.numpy(), a)
    m = t[0]
    np.testing.assert_array_equal(m.T.numpy(), a[0].T)
    assert not m.T.is_contiguous()
    assert m.T.contiguous().is_contiguous()
    np.testing.assert_array_equal(m.T.contiguous().numpy(), a[0].T)
    assert m.is_contiguous() and m.contiguous().data_ptr() == m.data_ptr()
    # N-D .T swaps the last two dims (PyTorch's .mT).
    np.testing.assert_array_equal(t.T.numpy(), np.swapaxes(a, -1, -2))
    assert asarray(np.arange(4)).T.shape == (4,)
    assert len(t) == 3 and len(t[0]) == 4
    assert [row.numpy().tolist() for row in t[0, :2]] == a[0, :2].tolist()


def test_zero_dim_and_empty():
    s = asarray(np.float32(2.5))
    assert s.shape == () and s.ndim == 0 and s.T.shape == ()
    assert float(s.numpy()) == 2.5
    with pytest.raises(TypeError, match="0-d"):
        len(s)
    e = asarray(np.zeros((0, 3), np.float64))
    assert e.shape == (0, 3) and e.numel() == 0 and e.is_contiguous()
    assert e.T.shape == (3, 0)
    assert e.to("int8").numpy().shape == (0, 3)
    assert np.from_dlpack(e).shape == (0, 3)
    assert asarray(np.arange(5))[3:1].shape == (0,)


def test_repr():
    t = asarray(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    r = repr(t)
    assert r.startswith("Tensor([[1., 2.],") and r.endswith("dtype=float32)")
    assert "bfloat16" in repr(t.to("bfloat16"))


# ------------------------------------------------------------------ runtime

def _openblas():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libopenblas" in line}
    if not paths:
        pytest.skip("OpenBLAS is not loaded in this build")
    return ctypes.CDLL(paths.pop())


def _omp_get_max_threads():
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libgomp" in line}
    if not paths:
        pytest.skip("libgomp is not loaded")
    return ctypes.CDLL(paths.pop()).omp_get_max_threads()


def test_set_num_threads_reaches_openmp_and_openblas():
    saved = _C.get_num_threads()
    try:
        _C.set_num_threads(3)
        assert _C.get_num_threads() == 3
        assert _omp_get_max_threads() == 3
        assert _openblas().openblas_get_num_threads() == 3
        _C.set_num_threads(1)
        assert _omp_get_max_threads() == 1
        assert _openblas().openblas_get_num_threads() == 1
    finally:
        _C.set_num_threads(saved)


@pytest.mark.parametrize("bad", [0, -1, 10**6, 2**40])
def test_set_num_threads_rejects_counts_outside_its_range(bad):
    before = _C.get_num_threads()
    top = _C.max_num_threads()
    with pytest.raises(ValueError, match=rf"set_num_threads: expected a number of threads in \[1, {top}\], got {bad}"):
        _C.set_num_threads(bad)
    assert _C.get_num_threads() == before
    with pytest.raises(TypeError):
        _C.set_num_threads(2.5)
    with pytest.raises(TypeError):
        _C.set_num_threads(True)


# Issue 10 item 5: the SDPA kernels started a team of get_num_threads()
# threads whatever the work (10**6: a crash in the OpenMP runtime).
def test_the_most_threads_then_sdpa_and_matmul_run():
    from backplane.nn import functional as F
    saved = _C.get_num_threads()
    q = np.ones((1, 1, 8, 8), np.float32)
    try:
        with pytest.raises(ValueError):
            _C.set_num_threads(10**6)
        _C.set_num_threads(_C.max_num_threads())
        for impl in ["flash:cpu", "efficient:cpu", "math:any"]:
            with backplane.backends.implementations("sdpa", impl):
                out = F.scaled_dot_product_attention(q, q, q)
            assert np.allclose(out.numpy(), 1.0)
        assert np.allclose(backplane.matmul(q[0, 0], q[0, 0]).numpy(), 8.0)
    finally:
        _C.set_num_threads(saved)


def test_an_absurd_omp_num_threads_is_clamped_with_a_warning():
    code = ("import numpy as np, backplane; from backplane.nn import functional as F; "
            "q = np.ones((2, 2, 64, 16), np.float32); F.scaled_dot_product_attention(q, q, q); "
            "backplane.matmul(q[0, 0], q[0, 0].T); print(backplane.get_num_threads(), backplane.max_num_threads())")
    proc = run_python(code, env={"OMP_NUM_THREADS": "100000"})
    got, top = proc.stdout.split()
    assert got == top and "OMP_NUM_THREADS asks for 100000 threads" in proc.stderr


def test_manual_seed_reproducibility():
    _C.manual_seed(123)
    a = _C._uniform(100).numpy().copy()
    b = _C._uniform(100).numpy().copy()
    _C.manual_seed(123)
    np.testing.assert_array_equal(_C._uniform(100).numpy(), a)
    np.testing.assert_array_equal(_C._uniform(100).numpy(), b)
    assert not np.array_equal(a, b)
    assert _C.initial_seed() == 123
    assert ((a >= 0) & (a < 1)).all()
    _C.manual_seed(-1)
    assert _C.initial_seed() == 2**64 - 1
    with pytest.raises(ValueError, match="manual_seed"):
        _C.manual_seed(2**64)
    with pytest.raises(TypeError, match="manual_seed"):
        _C.manual_seed("7")


def test_generator_is_thread_safe():
    _C.manual_seed(5)
    results = []

    def work():
        results.append(_C._uniform(64).numpy().copy())

    threads = [threading.Thread(target=work) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    rows = {r.tobytes() for r in results}
    assert len(rows) == 8  # every draw got its own stretch of the stream


def test_empty_cache_returns_the_kept_host_blocks():
    backplane.empty_cache()
    assert _C.memory_stats()["cpu"]["cached_bytes"] == 0
    t = asarray(np.zeros(1000, np.float64)).to("float32")
    in_use = _C.memory_stats()["cpu"]["current_bytes"]
    del t
    stats = _C.memory_stats()["cpu"]
    assert stats["current_bytes"] == in_use - 4000  # a kept block is not in use
    assert stats["cached_bytes"] in (0, 4032)  # 4000 rounded to 64 bytes; 0 under AddressSanitizer
    assert backplane.empty_cache() == stats["cached_bytes"]
    assert _C.memory_stats()["cpu"]["cached_bytes"] == 0


def test_memory_stats_up_down_and_peak_reset():
    _C.reset_peak_memory_stats()
    start = _C.memory_stats()["cpu"]
    assert start["peak_bytes"] == start["current_bytes"]
    t = asarray(np.zeros(1000, np.float64)).to("float32")  # 4000 new bytes
    mid = _C.memory_stats()["cpu"]
    assert mid["current_bytes"] == start["current_bytes"] + 4000
    v = t[::2].T
    assert _C.memory_stats()["cpu"]["current_bytes"] == mid["current_bytes"]  # views are free
    del t, v
    end = _C.memory_stats()["cpu"]
    assert end["current_bytes"] == start["current_bytes"]
    assert end["peak_bytes"] >= start["current_bytes"] + 4000
    _C.reset_peak_memory_stats()
    assert _C.memory_stats()["cpu"]["peak_bytes"] == end["current_bytes"]


# ------------------------------------------------------------------ cuda and bad inputs

def test_cuda_tensors_raise_a_clear_error_here():
    t = asarray(np.ones(3, np.float32))
    try:
        moved = t.to("cuda")
    except RuntimeError as e:
        assert "cuda:0" in str(e) and "CUDA is not available" in str(e)
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            asarray([1.0], device="cuda:0")
    else:  # a GPU machine: the round trip must be exact
        assert moved.device == "cuda:0"
        assert moved.__dlpack_device__() == (2, 0)
        np.testing.assert_array_equal(moved.to("cpu").numpy(), t.numpy())
        with pytest.raises(RuntimeError, match="to\\('cpu'\\)"):
            moved.numpy()


@pytest.mark.parametrize("bad, kind, words", [
    (lambda t: t.to("float8"), ValueError, ["dtype", "'float8'", "bfloat16"]),
    (lambda t: t.to(dtype="Float32"), ValueError, ["'Float32'"]),
    (lambda t: t.to(device="gpu"), ValueError, ["device", "'gpu'", "'cuda:<index>'"]),
    (lambda t: t.to("cuda:x"), ValueError, ["'cuda:x'"]),
    (lambda t: asarray([1], device="tpu"), ValueError, ["'tpu'"]),
    (lambda t: asarray(np.zeros(2, np.uint8)), ValueError, ["uint8", "bfloat16"]),
    (lambda t: asarray([1], dtype="uint16"), ValueError, ["'uint16'"]),
    (lambda t: t[3], IndexError, ["index 3", "[-3, 3)"]),
    (lambda t: t[-4], IndexError, ["index -4"]),
    (lambda t: t[0, 0, 0], IndexError, ["too many indices", "2-d"]),
    (lambda t: t[..., ...], IndexError, ["single ellipsis"]),
    (lambda t: t[::0], ValueError, ["step 0"]),
    (lambda t: t[1.5], TypeError, ["float", "int, slice"]),
    (lambda t: t[None], TypeError, ["NoneType"]),
    (lambda t: t[True], TypeError, ["bool"]),
    (lambda t: from_dlpack([1, 2]), TypeError, ["list", "__dlpack__"]),
    (lambda t: t.to(object), ValueError, ["'object'", "bfloat16"]),
    (lambda t: t.to(3.5), TypeError, ["dtype", "float"]),
    # Issue 10 item 10: these raised "RuntimeError: std::bad_cast".
    (lambda t: t[2**70], IndexError, ["index 1180591620717411303424", "[-3, 3)"]),
    (lambda t: t[0, -2**70], IndexError, ["index -1180591620717411303424", "[-4, 4)"]),
    (lambda t: from_dlpack(_BadDevice("cpu")), TypeError, ["__dlpack_device__", "'cpu'", "tuple"]),
    (lambda t: from_dlpack(_BadDevice((1.5, 0))), ValueError, ["__dlpack_device__", "(1.5, 0)"]),
    (lambda t: from_dlpack(_BadDevice((2**70, 0))), ValueError, ["__dlpack_device__"]),
    (lambda t: t.__dlpack__(max_version="1.0"), TypeError, ["max_version", "'1.0'"]),
    (lambda t: t.__dlpack__(dl_device=(1, 2**40)), ValueError, ["dl_device"]),
    (lambda t: t.__dlpack__(copy="yes"), TypeError, ["copy", "bool"]),
    (lambda t: t.__array__(copy=2), TypeError, ["copy", "bool"]),
    (lambda t: t.to("cpu:1"), ValueError, ["'cpu:1'", "'cpu:0'"]),
])
def test_bad_inputs(bad, kind, words):
    t = asarray(np.zeros((3, 4), np.float32))
    with pytest.raises(kind) as info:
        bad(t)
    for w in words:
        assert w in str(info.value)
