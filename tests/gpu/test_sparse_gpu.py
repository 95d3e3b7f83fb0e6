"""cusparselt:spmma on a CUDA machine (scripts/gpu-check): 2:4 products
through cuSPARSELt against the dense product of the pruned weight in float64
on the CPU, each dtype (float32 in TF32 with a 1:2 weight, bfloat16, float16,
int8), odd-but-valid shapes, linear and mm orientations, a bias, the
algorithm search on and off (cudnn.benchmark, the autotune cache), the
checks' reasons in explain, the per-weight compression cache, and torch's
to_sparse_semi_structured where importable. Skipped without a device."""

import contextlib
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from gpu_common import needs_torch, requires_cuda, torch  # first: it puts this checkout's package on sys.path

import backplane
import backplane.backends as B
from backplane import sparse

pytestmark = requires_cuda
ROOT = pathlib.Path(__file__).resolve().parents[2]
ROW = "cusparselt:spmma"
# rtol per dtype; products accumulate in fp32 (int8: int32, exact here).
TOL = {"float32": 2e-3, "bfloat16": 1.6e-2, "float16": 2e-3, "int8": 0}
# (out, in, n): multiples of each dtype's alignment (8 / 16 / 32), not of any tile size.
SHAPES = {
    "float32": [(8, 8, 8), (24, 40, 56), (136, 264, 72)],
    "float16": [(16, 16, 16), (48, 80, 112), (144, 208, 48)],
    "bfloat16": [(16, 16, 16), (48, 80, 112), (144, 208, 48)],
    "int8": [(32, 32, 32), (96, 160, 64), (32, 192, 96)],
}


def need_row():
    if not B.cusparselt.is_available():
        pytest.skip("built without cuSPARSELt")


@contextlib.contextmanager
def knobs(benchmark=False, precision="high"):
    """cudnn.benchmark (the algorithm search) and the fp32 matmul precision ('high': TF32 permitted)."""
    old_bench, old_prec = B.cudnn.benchmark, backplane.get_float32_matmul_precision()
    B.cudnn.benchmark = benchmark
    backplane.set_float32_matmul_precision(precision)
    try:
        yield
    finally:
        B.cudnn.benchmark = old_bench
        backplane.set_float32_matmul_precision(old_prec)


def host64(t):
    t = t.to("cpu")
    if t.dtype in ("float16", "bfloat16"):
        t = t.to("float32")
    return np.asarray(t.numpy()).astype(np.float64)


def as_dtype(a, dtype, device="cpu"):
    """A float32 / integer NumPy array as a backplane tensor of dtype on device."""
    if dtype == "int8":
        return backplane.asarray(np.asarray(a, np.int8)).to(device)
    return backplane.asarray(np.asarray(a, np.float32)).to(dtype).to(device)


def pattern(out, k, rng, one_two):
    """A 0/1 mask: 2 of every 4 columns of a row (one_two: 1 of every 2, float32's structure)."""
    mask = np.zeros((out, k), bool)
    for j in range(out):
        for c0 in range(0, k, 4):
            if one_two:
                mask[j, c0 + rng.integers(2)] = mask[j, c0 + 2 + rng.integers(2)] = True
            else:
                mask[j, c0 + rng.choice(4, 2, replace=False)] = True
    return mask


def weight(out, k, dtype, seed, one_two=None):
    """(cuda packed, cuda meta, float64 dense pruned weight): compressed on the CPU, moved to the GPU."""
    rng = np.random.default_rng(seed)
    one_two = dtype == "float32" if one_two is None else one_two
    mask = pattern(out, k, rng, one_two)
    if dtype == "int8":
        # +-1 entries: every int8 sum below fits in int8 (k <= 192: at most 96 products of magnitude 1)
        dense = np.where(mask, rng.choice([-1.0, 1.0], (out, k)), 0.0)
        ws = sparse.to_sparse_semi_structured(as_dtype(dense, "float16"))
        packed = as_dtype(host64(ws.packed), "int8", "cuda")
        return packed, ws.meta.to("cuda"), dense
    dense = np.where(mask, rng.uniform(0.25, 1, (out, k)) * rng.choice([-1, 1], (out, k)), 0.0)
    ws = sparse.to_sparse_semi_structured(as_dtype(dense, dtype))
    return ws.packed.to("cuda"), ws.meta.to("cuda"), host64(ws.to_dense())


def activations(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-1, 2, shape) if dtype == "int8" else rng.uniform(-1, 1, shape)
    t = as_dtype(a, dtype, "cuda")
    return t, host64(t)


def close(got, want, dtype, k):
    assert got.device.startswith("cuda") and got.dtype == dtype
    if dtype == "int8":
        np.testing.assert_array_equal(host64(got), want)
    else:
        np.testing.assert_allclose(host64(got), want, rtol=TOL[dtype], atol=TOL[dtype] * np.sqrt(k))


def test_cusparselt_module_answers_with_the_linked_library():
    need_row()
    version = B.cusparselt.version()
    assert isinstance(version, int) and version >= 400
    # PyTorch's answer: its version table (None for versions it does not list)
    assert B.cusparselt.get_max_alg_id() == {400: 4, 502: 5, 602: 37}.get(version)


@pytest.mark.parametrize("benchmark", [False, True])
@pytest.mark.parametrize("dtype", list(SHAPES))
def test_products_match_the_float64_oracle(dtype, benchmark):
    need_row()
    for i, (out, k, n) in enumerate(SHAPES[dtype]):
        packed, meta, w = weight(out, k, dtype, seed=10 + i)
        x, x64 = activations((n, k), dtype, seed=20 + i)
        with knobs(benchmark=benchmark):
            table = B.explain("sparse_linear", x, packed, meta)
            assert table.chosen == ROW, str(table)
            close(sparse.semi_structured_linear(x, packed, meta), x64 @ w.T, dtype, k)
            b, b64 = activations((k, n), dtype, seed=30 + i)  # mm: B [in, n] (X is its transposed view)
            close(sparse.semi_structured_mm(packed, meta, b), w @ b64, dtype, k)
            if dtype != "int8":
                bias = as_dtype(np.random.default_rng(40 + i).uniform(-1, 1, out), dtype, "cuda")
                close(sparse.semi_structured_linear(x, packed, meta, bias), x64 @ w.T + host64(bias), dtype, k)
            xt = x.to("cpu").T.contiguous().to("cuda").T  # linear's X as a transposed view: B with op N
            close(sparse.semi_structured_linear(xt, packed, meta), x64 @ w.T, dtype, k)


def test_float32_needs_tf32_and_a_one_two_weight():
    need_row()
    packed, meta, w = weight(64, 64, "float32", seed=1)
    x, x64 = activations((32, 64), "float32", seed=2)
    with knobs(precision="highest"):  # no TF32: cuSPARSELt cannot run float32
        row = B.explain("sparse_linear", x, packed, meta).row(ROW)
        assert row.status == "rejected" and any("tf32" in r for r in row.reasons), row.reasons
    packed24, meta24, _ = weight(64, 64, "float32", seed=3, one_two=False)  # 2:4 but (almost surely) not 1:2
    with knobs():
        row = B.explain("sparse_linear", x, packed24, meta24).row(ROW)
        assert row.status == "rejected" and any("1:2" in r for r in row.reasons), row.reasons
        close(sparse.semi_structured_linear(x, packed, meta), x64 @ w.T, "float32", 64)


def test_checks_say_why_in_explain():
    need_row()
    packed, meta, _ = weight(48, 64, "float16", seed=4)
    odd = backplane.asarray(np.ones((24, 64), np.float32)).to("float16").to("cuda")  # n = 24: not a multiple of 16
    row = B.explain("sparse_linear", odd, packed, meta).row(ROW)
    assert row.status == "rejected" and any("multiples of 16" in r for r in row.reasons), row.reasons
    wide = backplane.asarray(np.ones((32, 128), np.float32)).to("float16").to("cuda")
    strided = wide[:, ::2]  # no unit stride
    row = B.explain("sparse_linear", strided, packed, meta).row(ROW)
    assert row.status == "rejected" and any("unit stride" in r for r in row.reasons), row.reasons
    packed8, meta8, _ = weight(32, 64, "int8", seed=5)
    x8, _ = activations((32, 64), "int8", seed=6)
    row = B.explain("sparse_linear", x8, packed8, meta8, as_dtype(np.zeros(32), "int8", "cuda")).row(ROW)
    assert row.status == "rejected" and any("bias" in r for r in row.reasons), row.reasons


def test_the_compressed_form_follows_the_weight():
    need_row()
    x, x64 = activations((32, 64), "float16", seed=7)
    for seed in range(4):  # new weights of one shape, freed in turn: a reused address must not match
        packed, meta, w = weight(48, 64, "float16", seed=50 + seed)
        close(sparse.semi_structured_linear(x, packed, meta), x64 @ w.T, "float16", 64)
        del packed, meta


def test_benchmark_tunes_once_and_a_new_process_reuses_the_alg(tmp_path):
    need_row()
    path = tmp_path / "cache.txt"
    code = ("import numpy as np, backplane, backplane.backends as B; from backplane import sparse; "
            "B.cudnn.benchmark = True; "
            "ws = sparse.to_sparse_semi_structured(backplane.asarray(np.ones((64, 64), np.float32)).to('float16'), "
            "prune=True); "
            "x = backplane.asarray(np.ones((32, 64), np.float32)).to('float16').to('cuda'); "
            "y = sparse.semi_structured_linear(x, ws.packed.to('cuda'), ws.meta.to('cuda')); "
            "assert float(np.asarray(y.to('cpu').to('float32').numpy()).max()) == 32.0")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), BACKPLANE_AUTOTUNE_CACHE=str(path))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    lines = [line for line in path.read_text().splitlines() if line.startswith(f"sparse/{ROW}\t")]
    assert len(lines) == 1 and "\talg " in lines[0], path.read_text()
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert [l for l in path.read_text().splitlines() if l.startswith(f"sparse/{ROW}\t")] == lines


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_against_torch_to_sparse_semi_structured(dtype):
    need_row()
    from torch.sparse import SparseSemiStructuredTensor, to_sparse_semi_structured
    SparseSemiStructuredTensor._FORCE_CUTLASS = False  # torch's cuSPARSELt path
    packed, meta, w = weight(128, 128, dtype, seed=8)
    x, x64 = activations((64, 128), dtype, seed=9)
    tdt = getattr(torch, dtype)
    tw = to_sparse_semi_structured(torch.from_numpy(w).to(tdt).cuda())
    tx = torch.from_numpy(x64).to(tdt).cuda()
    theirs = torch.nn.functional.linear(tx, tw).double().cpu().numpy()
    ours = host64(sparse.semi_structured_linear(x, packed, meta))
    np.testing.assert_allclose(ours, theirs, rtol=TOL[dtype], atol=TOL[dtype] * np.sqrt(128))
