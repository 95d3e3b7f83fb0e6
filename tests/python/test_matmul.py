"""backplane.matmul / addmm / linear against NumPy: every implementation,
tile edges, odd sizes, strided views, dtypes, semantics, precision, bad input."""

import ml_dtypes
import numpy as np
import pytest

import backplane
from backplane import backends
from conftest import onednn_has_bf16

IMPLS = [i.name for i in backends.list_implementations("matmul") if i.available]
DTYPES = {"float32": (np.float32, 1e-5), "float64": (np.float64, 1e-12),
          "float16": (np.float16, 2e-2), "bfloat16": (ml_dtypes.bfloat16, 3e-2)}
SHAPES = [(1, 1, 1), (7, 5, 3), (16, 16, 16), (17, 33, 15), (65, 31, 129), (1, 48, 20), (40, 1, 9)]
RNG = np.random.default_rng(0)


pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def check(got, a, b, tol):
    want = np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))
    got = np.asarray(got.numpy(), np.float64)
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    k = a.shape[-1]
    assert np.abs(got - want).max(initial=0) / scale <= tol * max(1.0, np.sqrt(k))


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_every_implementation_matches_numpy_or_says_why(impl, dtype):
    np_dtype, tol = DTYPES[dtype]
    with backends.implementations("matmul", impl):
        for m, n, k in SHAPES:
            a, b = rand((m, k), np_dtype), rand((k, n), np_dtype)
            table = backends.explain("matmul", a, b)
            if table.chosen is None:
                assert table.row(impl).status == "rejected" and table.row(impl).reasons
                with pytest.raises(backends.NoImplementationError):
                    backplane.matmul(a, b)
                return
            assert table.chosen == impl
            out = backplane.matmul(a, b)
            assert isinstance(out, backplane.Tensor) and out.dtype == dtype
            check(out, a, b, tol)


# NaN and inf go where IEEE arithmetic sends them, in every implementation
# (bf16 allowed, so the bf16 kernels take the f32 case too).
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_nan_and_inf_propagate_through_every_implementation(impl, dtype):
    np_dtype, _ = DTYPES[dtype]
    a, b = rand((17, 15), np.float64), rand((15, 33), np.float64)
    a[2, 1] = np.nan          # row 2 of the result: NaN
    b[3, 4] = np.inf          # column 4: ±inf
    b[14, 0] = -np.inf        # column 0: ±inf, and NaN where it meets the zero below
    a[0, 14] = 0.0
    a, b = a.astype(np_dtype), b.astype(np_dtype)
    backplane.set_float32_matmul_precision("medium")
    try:
        with backends.implementations("matmul", impl):
            if backends.explain("matmul", a, b).chosen is None:
                pytest.skip(f"{impl} does not take {dtype}")
            got = np.asarray(backplane.matmul(a, b).numpy(), np.float64)
    finally:
        backplane.set_float32_matmul_precision("highest")
    with np.errstate(invalid="ignore"):
        want = np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))
    assert (np.isnan(got) == np.isnan(want)).all()
    assert (np.isposinf(got) == np.isposinf(want)).all() and (np.isneginf(got) == np.isneginf(want)).all()


@pytest.mark.parametrize("impl", IMPLS)
def test_strided_views(impl):
    a_t = rand((23, 19)).T             # transposed
    b_s = rand((23, 41))[:, 1:40:2]    # column stride 2
    b_t = rand((20, 23)).T
    with backends.implementations("matmul", impl):
        for b in (b_s, b_t):
            a_bp, b_bp = backplane.asarray(a_t), backplane.asarray(b)
            table = backends.explain("matmul", a_bp, b_bp)
            if table.chosen is None:
                # a BLAS without a unit stride, or bf16 arithmetic without the permission
                assert any(r.startswith(("layout:", "precision:")) for r in table.row(impl).reasons)
                continue
            check(backplane.matmul(a_bp, b_bp), a_t, b, 1e-5)


def test_blas_rejects_views_without_a_unit_stride():
    if "openblas:gemm" not in IMPLS:
        pytest.skip("OpenBLAS not built")
    a, b = rand((8, 8)), rand((8, 16))[:, ::2]
    row = backends.explain("matmul", a, b).row("openblas:gemm")
    assert row.status == "rejected"
    assert row.reasons == ["layout: expected a and b each with a unit stride in one dimension and a leading "
                           "dimension covering the other (transposed views are fine), got b strides (16, 2)"]


@pytest.mark.parametrize("sa,sb", [((5,), (5,)), ((5,), (5, 3)), ((4, 5), (5,)), ((2, 1, 4, 5), (3, 5, 6)),
                                   ((3, 4, 5), (5, 2)), ((5,), (2, 5, 3)), ((2, 4, 5), (5,))])
def test_semantics_follow_numpy_matmul(sa, sb):
    a, b = rand(sa, np.float64), rand(sb, np.float64)
    out = backplane.matmul(a, b)
    want = np.matmul(a, b)
    assert out.shape == want.shape
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-12)


def test_addmm_and_linear():
    a, b, bias = rand((4, 6), np.float64), rand((6, 3), np.float64), rand((3,), np.float64)
    np.testing.assert_allclose(backplane.addmm(bias, a, b, beta=0.5, alpha=2.0).numpy(), 0.5 * bias + 2 * a @ b,
                               rtol=1e-12)
    w = rand((3, 6), np.float64)
    np.testing.assert_allclose(backplane.linear(a, w, bias).numpy(), a @ w.T + bias, rtol=1e-12)
    np.testing.assert_allclose(backplane.linear(rand((2, 5, 6), np.float64), w).shape, (2, 5, 3))
    x = rand((6,), np.float64)
    np.testing.assert_allclose(backplane.linear(x, w).numpy(), w @ x, rtol=1e-12)


def test_medium_has_the_bf16_signature_and_highest_is_exact():
    # 1 + 2**-10 is exact in fp32 and rounds to 1 in bf16: x*x tells which arithmetic ran.
    x = np.array([[1 + 2 ** -10]], dtype=np.float32)
    exact = np.float32(x[0, 0] * x[0, 0])
    backplane.set_float32_matmul_precision("highest")
    for impl in IMPLS:
        with backends.implementations("matmul", impl):
            if backends.explain("matmul", x, x).chosen:
                assert backplane.matmul(x, x).numpy()[0, 0] == exact, impl
    backplane.set_float32_matmul_precision("medium")
    try:
        for impl in ("builtin:avx512_bf16", "onednn:matmul"):
            if impl in IMPLS:
                with backends.implementations("matmul", impl):
                    # a permission, not an order: where oneDNN has no bf16 (AVX2) it stays exact
                    takes_it = impl != "onednn:matmul" or onednn_has_bf16()
                    assert backplane.matmul(x, x).numpy()[0, 0] == (1.0 if takes_it else exact), impl
        assert backends.explain("matmul", x, x).chosen == (
            "builtin:avx512_bf16" if "builtin:avx512_bf16" in IMPLS else backends.explain("matmul", x, x).chosen)
    finally:
        backplane.set_float32_matmul_precision("highest")


def test_high_permits_tf32_which_the_cpu_lacks():
    backplane.set_float32_matmul_precision("high")
    try:
        x = rand((3, 3))
        table = backends.explain("matmul", x, x)
        assert any("which no CPU has" in n for n in table.notes)
        assert table.chosen != "builtin:avx512_bf16"
        check(backplane.matmul(x, x), x, x, 1e-6)
    finally:
        backplane.set_float32_matmul_precision("highest")


@pytest.mark.parametrize("a,b,match", [
    ((2, 3), (4, 5), r"matmul: expected a's last dimension equal to b's second-to-last dimension, got shapes "
                     r"\[2, 3\] and \[4, 5\] \(3 != 4\)"),
    ((2, 2, 3), (3, 3, 4), r"a batch \[2\], b batch \[3\]"),
    ((), (3,), r"at least 1 dimension"),
])
def test_bad_shapes(a, b, match):
    with pytest.raises(ValueError, match=match):
        backplane.matmul(rand(a), rand(b))


def test_mixed_dtypes_and_integer_dtypes():
    with pytest.raises(ValueError, match="a float32 and b float64"):
        backplane.matmul(rand((2, 3)), rand((3, 2), np.float64))
    with pytest.raises(ValueError, match="float16, bfloat16, float32, float64, complex64, complex128, int8, int32 or int64"):
        backplane.matmul(np.ones((2, 2), bool), np.ones((2, 2), bool))
    with pytest.raises(ValueError, match=r"bias \[5\] for a product of shape \[2, 4\]"):
        backplane.addmm(rand((5,)), rand((2, 3)), rand((3, 4)))
    with pytest.raises(ValueError, match="a complex64 and b float32"):
        backplane.matmul(crand((2, 3), np.complex64), rand((3, 2)))


def crand(shape, dtype):
    return (RNG.uniform(-1, 1, size=shape) + 1j * RNG.uniform(-1, 1, size=shape)).astype(dtype)


# Complex products, as torch.matmul (no conjugation): openblas:gemm
# (cgemm/zgemm) and ref:any take them, the others say why not.
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype,tol", [(np.complex64, 1e-5), (np.complex128, 1e-12)])
def test_complex_products_match_numpy(impl, dtype, tol):
    cases = [(crand((m, k), dtype), crand((k, n), dtype)) for m, n, k in SHAPES]
    cases += [(crand((19, 23), dtype).T, crand((20, 19), dtype).T),      # transposed views
              (crand((3, 1, 5, 7), dtype), crand((2, 7, 4), dtype)),      # batch broadcasting
              (crand((7,), dtype), crand((2, 7, 3), dtype)),
              (crand((6, 9), dtype)[:, ::2], crand((5, 4), dtype))]       # no unit stride
    with backends.implementations("matmul", impl):
        for a, b in cases:
            table = backends.explain("matmul", a, b)
            if table.chosen is None:
                assert any(r.startswith(("dtype:", "layout:")) for r in table.row(impl).reasons)
                if impl in ("ref:any", "openblas:gemm"):
                    assert all(r.startswith("layout:") for r in table.row(impl).reasons)
                continue
            out = backplane.matmul(a, b)
            assert out.dtype == np.dtype(dtype).name
            want = np.matmul(a.astype(np.complex128), b.astype(np.complex128))
            got = out.numpy()
            assert got.shape == want.shape
            assert np.abs(got - want).max() <= tol * max(1.0, np.abs(want).max()) * np.sqrt(a.shape[-1])
    assert backends.explain("matmul", *cases[0]).row("ref:any").status in ("acceptable", "chosen")


def test_complex_addmm_and_linear():
    a, b, bias = crand((4, 6), np.complex128), crand((6, 3), np.complex128), crand((3,), np.complex128)
    for impl in ("ref:any", "openblas:gemm"):
        if impl not in IMPLS:
            continue
        with backends.implementations("matmul", impl):
            np.testing.assert_allclose(backplane.addmm(bias, a, b, beta=0.5, alpha=2.0).numpy(),
                                       0.5 * bias + 2 * a @ b, rtol=1e-12)
    w = crand((3, 6), np.complex64)
    x = crand((2, 6), np.complex64)
    np.testing.assert_allclose(backplane.linear(x, w, bias.astype(np.complex64)).numpy(), x @ w.T + bias,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(backplane.matmul(np.zeros((2, 0), np.complex64), np.zeros((0, 3), np.complex64)).numpy(),
                                  np.zeros((2, 3), np.complex64))


@pytest.mark.skipif(not backplane.cuda.is_available(), reason="needs a CUDA device")
def test_mixed_devices():
    with pytest.raises(ValueError, match="one device"):
        backplane.matmul(backplane.asarray(rand((2, 2))), backplane.asarray(rand((2, 2)), device="cuda"))


def test_python_native_override_runs_first_and_explain_mentions_it():
    from backplane.backends import python_native
    calls = []

    def numpy_matmul(a, b):
        calls.append(1)
        return backplane.asarray(np.matmul(a, b))

    python_native.register("numpy_dsl_test", "matmul", numpy_matmul, predicate=lambda a, b: np.shape(a) == (2, 2))
    try:
        a = rand((2, 2))
        backplane.matmul(a, a)
        assert calls == [1]
        assert "python_native override" in str(backends.explain("matmul", a, a))
        backplane.matmul(rand((3, 3)), rand((3, 3)))  # the predicate declines
        assert calls == [1]
    finally:
        python_native.numpy_dsl_test.disable()


def test_cuda_implementations_are_listed_and_say_why_they_cannot_run():
    names = [str(i) for i in backplane.backends.list_implementations("matmul")]
    if not backplane._C.built_with["cublas"]:
        pytest.skip("built without cuBLAS")
    assert names.index("cublas:gemm") < names.index("cublaslt:gemm") < names.index("ref:any")
    if not backplane.cuda.is_available():
        rows = {r.implementation: r for r in backplane.backends.explain("matmul", np.ones((4, 4), np.float32),
                                                                         np.ones((4, 4), np.float32))}
        assert rows["cublas:gemm"].status == "not available"


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_integer_products_are_exact_and_wrap(dtype):
    """PyTorch multiplies integer tensors on the CPU; ref:any does, exactly, wrapping as two's complement."""
    rng = np.random.default_rng(3)
    hi = 100 if dtype == np.int8 else 1 << 20
    a = rng.integers(-hi, hi, (2, 5, 7)).astype(dtype)
    b = rng.integers(-hi, hi, (7, 3)).astype(dtype)
    # The oracle in int64 with wrapping, then truncated to the dtype.
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)
    assert backplane.matmul(a, b).dtype == np.dtype(dtype).name
    np.testing.assert_array_equal(backplane.matmul(a, b).numpy(), want)
    np.testing.assert_array_equal(backplane.matmul(a[0].T.copy().T, b).numpy(), want[0])  # strided
    assert backends.explain("matmul", a, b).chosen == "ref:any"
    bias = rng.integers(-9, 9, (5, 3)).astype(dtype)
    np.testing.assert_array_equal(backplane.addmm(bias, a[0], b, beta=2, alpha=-3).numpy(),
                                  (2 * bias.astype(np.int64) - 3 * (a[0].astype(np.int64) @ b.astype(np.int64))).astype(dtype))
    np.testing.assert_array_equal(backplane.matmul(np.zeros((2, 0), dtype), np.zeros((0, 4), dtype)).numpy(),
                                  np.zeros((2, 4), dtype))
    with pytest.raises(ValueError, match="an integral alpha for integer tensors"):
        backplane.addmm(bias, a[0], b, alpha=0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, ml_dtypes.bfloat16])
def test_a_batch_against_one_b_folds_into_rows_where_the_strides_merge(dtype):
    # Note [Folding the batch into rows]: one GEMM of batch * m rows when a's
    # batch and row dims merge; otherwise one GEMM per batch entry. Same results.
    def r(shape):
        return rand(shape, np.float64).astype(dtype)
    b, w, bias = r((7, 5)), r((5, 7)), r((5,))
    cases = {  # name: (a, folds)
        "contiguous": (r((3, 4, 6, 7)), True),
        "size-1 dims": (r((1, 4, 1, 7)), True),
        "every other row": (r((3, 12, 7))[:, ::2], True),   # row stride 14, batch stride 6 * 14
        "every other batch": (r((6, 4, 6, 7))[::2], False),
        "rows transposed": (r((3, 7, 6)).transpose(0, 2, 1), False),
        "broadcast batch": (np.broadcast_to(r((1, 6, 7)), (3, 6, 7)), False),
    }
    tol = 3e-2 if dtype == ml_dtypes.bfloat16 else 1e-5
    f64 = lambda x: x.astype(np.float64)  # noqa: E731
    for name, (a, folds) in cases.items():
        batch_rows = int(np.prod(a.shape[:-1]))
        problem = backends.explain("matmul", a, b).problem
        assert (f"batch=1 m={batch_rows} " in problem) == folds, (name, problem)
        got = backplane.matmul(a, b).numpy()
        assert got.shape == a.shape[:-1] + (5,), name
        np.testing.assert_allclose(f64(got), f64(a) @ f64(b), rtol=tol, atol=tol, err_msg=name)
        got = backplane.linear(a, w, bias).numpy()
        np.testing.assert_allclose(f64(got), f64(a) @ f64(w).T + f64(bias), rtol=tol, atol=tol, err_msg=name)
    # A 1-D b folds too (a batch of matrix-vector products), and NaN stays in its row.
    a = r((4, 3, 7))
    a[2, 1, 3] = np.nan
    got = f64(backplane.matmul(a, b[:, 0]).numpy())
    assert got.shape == (4, 3) and np.isnan(got[2, 1]) and np.isnan(got).sum() == 1
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(f64(a) @ f64(b[:, 0])), rtol=tol, atol=tol)


BUILTINS = [i for i in IMPLS if i.startswith("builtin:")]


@pytest.mark.parametrize("impl", BUILTINS)
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("threads", [1, 2])
def test_a_broadcast_over_the_batch_is_packed_once_and_multiplies_right(impl, dtype, threads):
    # Note [GEMM shared A]: a batch whose A is broadcast packs A once for all
    # its products (conv's weight over a batch of images). Several k blocks
    # (k = 777 > KC), rows off the micro-tile, a transposed A, and a NaN in
    # one batch entry's B that must stay in that entry.
    np_dtype, tol = DTYPES[dtype]
    if backends.explain("matmul", rand((2, 2), np_dtype), rand((2, 2), np_dtype)).row(impl).status == "rejected":
        pytest.skip(f"{impl} takes no {dtype}")
    saved = backplane.get_num_threads()
    backplane.set_num_threads(threads)
    try:
        for m, n, k, transposed in [(37, 200, 777, False), (19, 97, 300, True), (130, 250, 64, False)]:
            a0 = rand((k, m) if transposed else (m, k), np_dtype)
            a = np.broadcast_to(a0.T if transposed else a0, (2, 3, m, k))
            b = rand((2, 3, k, n), np_dtype)
            b[1, 2, 5, 7] = np.nan
            with backends.implementations("matmul", impl):
                assert backends.explain("matmul", a, b).chosen == impl
                got = np.asarray(backplane.matmul(a, b).numpy(), np.float64)
            want = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
            nan = np.isnan(want)
            assert nan.sum() == m and np.array_equal(np.isnan(got), nan), (m, n, k)
            scale = tol * max(1.0, np.sqrt(k)) * max(1.0, float(np.abs(want[~nan]).max()))
            assert np.abs(got[~nan] - want[~nan]).max() <= scale, (m, n, k)
    finally:
        backplane.set_num_threads(saved)


def test_openblas_leads_large_f32_products_where_the_widest_builtin_kernel_is_avx2():
    # Note [Matmul default order]: a rank on the problem and the hardware, never a knob.
    from conftest import cpu_has
    avx2_widest = not cpu_has("avx512f")
    big = (np.ones((64, 2048), np.float32), np.ones((2048, 512), np.float32))   # n x k = 2^20
    t = backends.explain("matmul", *big)
    if "openblas:gemm" not in IMPLS:
        pytest.skip("no OpenBLAS in this build")
    assert (t.chosen == "openblas:gemm") == avx2_widest
    assert any(("openblas:gemm first" if avx2_widest else "the list's") in n for n in t.notes)
    # below the bound, a matrix-vector product, other dtypes: the list's order
    for a, b in [(np.ones((64, 1024), np.float32), np.ones((1024, 512), np.float32)),
                 (np.ones((1, 4096), np.float32), np.ones((4096, 4096), np.float32)),
                 tuple(x.astype(np.float64) for x in big)]:
        assert backends.explain("matmul", a, b).chosen != "openblas:gemm"
    # knobs still decide: a scope or a preferred library overrides the rank
    with backends.implementations("matmul", "builtin"):
        assert backends.explain("matmul", *big).chosen.startswith("builtin:")
    backends.cpu.preferred_blas_library("onednn")
    try:
        assert backends.explain("matmul", *big).chosen == "onednn:matmul"
    finally:
        backends.cpu.preferred_blas_library("default")
    np.testing.assert_allclose(backplane.matmul(*big).numpy(), big[0] @ big[1])


def test_onednn_leads_linear_shaped_and_narrow_products():
    # Note [Matmul default order]: B a transposed view with few rows (f32 <= 512, bf16 <= 64), or an f32
    # product with n <= 64 columns and a large A; a rank on the problem, never a knob.
    if "onednn:matmul" not in IMPLS:
        pytest.skip("no oneDNN in this build")
    bf = ml_dtypes.bfloat16
    x, w = RNG.standard_normal((49, 2048)).astype(np.float32), RNG.standard_normal((512, 2048)).astype(np.float32)
    t = backends.explain("linear", x, w)
    assert t.chosen == "onednn:matmul" and any("B is a transposed view" in n for n in t.notes), t.notes
    assert backends.explain("matmul", x, w.T).chosen == "onednn:matmul"
    np.testing.assert_allclose(backplane.linear(x, w).numpy(), x.astype(np.float64) @ w.T.astype(np.float64),
                               rtol=1e-4, atol=1e-3)
    if onednn_has_bf16():
        assert backends.explain("linear", x.astype(bf), w.astype(bf)).chosen == "onednn:matmul"
    # more rows than the bound, a batch of products, a plain B, f64: the list's order
    assert backends.explain("linear", np.ones((513, 2048), np.float32), w).chosen != "onednn:matmul"
    assert backends.explain("linear", np.ones((65, 2048), bf), w.astype(bf)).chosen != "onednn:matmul"
    batched_wt = np.ones((2, 512, 2048), np.float32).transpose(0, 2, 1)  # two different transposed B
    assert backends.explain("matmul", np.ones((2, 49, 2048), np.float32), batched_wt).chosen != "onednn:matmul"
    assert backends.explain("matmul", x, np.ones((2048, 512), np.float32)).chosen != "onednn:matmul"
    assert backends.explain("linear", x.astype(np.float64), w.astype(np.float64)).chosen != "onednn:matmul"
    # one row is the GEMV, which packs nothing (f32 and bf16); up to four rows take the few-row products where
    # the AVX-512 kernels have them (Note [Few-row products])
    assert backends.explain("linear", x[:1], w).chosen.startswith("builtin:")
    assert backends.explain("linear", x[:1].astype(bf), w.astype(bf)).chosen.startswith("builtin:")
    few = 4 if "builtin:avx512" in IMPLS else 1
    assert backends.explain("linear", x[:few], w).chosen.startswith("builtin:")
    assert backends.explain("linear", x[:few + 1], w).chosen == "onednn:matmul"
    shallow = np.ones((1024, 128), np.float32)  # k below kGemmFewRowsMinK: the few-row products do not apply
    assert backends.explain("linear", np.ones((2, 128), np.float32), shallow).chosen == "onednn:matmul"
    # narrow: n = 32 columns from a 512 x 2048 A (an NCHW 1x1 convolution's product), batched too
    a, b = np.ones((512, 2048), np.float32), np.ones((2048, 32), np.float32)
    t = backends.explain("matmul", a, b)
    assert t.chosen == "onednn:matmul" and any("n = 32 <= 64 columns" in n for n in t.notes), t.notes
    assert backends.explain("matmul", a, np.ones((3, 2048, 49), np.float32)).chosen == "onednn:matmul"
    # ... but one product whose last strip the AVX-512 kernel computes as dot products (48 + 1 columns, or
    # 2-4) keeps the list's order (Note [GEMM narrow last strip])
    for n in (49, 52, 3):
        t = backends.explain("matmul", a, np.ones((2048, n), np.float32))
        if "builtin:avx512" in IMPLS:
            assert t.chosen == "builtin:avx512" and any("as dot products" in x for x in t.notes), (n, t.notes)
        else:
            assert t.chosen == "onednn:matmul", n
    assert backends.explain("matmul", a, np.ones((2048, 53), np.float32)).chosen == "onednn:matmul"
    assert backends.explain("matmul", a, np.ones((2048, 65), np.float32)).chosen != "onednn:matmul"
    assert backends.explain("matmul", a, np.ones((2048, 1), np.float32)).chosen.startswith("builtin:")  # W·x: GEMV
    assert backends.explain("matmul", a, np.ones(2048, np.float32)).chosen.startswith("builtin:")
    assert backends.explain("matmul", a[:, :1024][:256], np.ones((1024, 49), np.float32)).chosen != "onednn:matmul"
    assert backends.explain("matmul", a.astype(bf), b.astype(bf)).chosen != "onednn:matmul"
    # knobs still decide: a scope overrides the rank
    with backends.implementations("matmul", "builtin"):
        assert backends.explain("linear", x, w).chosen.startswith("builtin:")
