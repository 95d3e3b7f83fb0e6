"""cudnn:conv, native:depthwise and ref:cuda on a real GPU (scripts/gpu-check),
against the float64 NumPy oracle of the CPU tests (tests/python/conv_oracle.py)
and, where importable, torch.nn.functional.conv2d; and the cuDNN knobs:
enabled, depthwise_kernel, deterministic, the TF32 permission, benchmark with
its limit and the autotune cache (a tuned plan reused by a new process).
Skipped without a GPU."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "python"))  # the shared conv oracle

import backplane  # noqa: E402
import backplane.backends as B  # noqa: E402
from conv_oracle import conv, conv_transpose  # noqa: E402

F = backplane.nn.functional
pytestmark = pytest.mark.skipif(not backplane.cuda.is_available(),
                                reason=f"no CUDA device: {backplane.cuda.unavailable_reason()}")

TOL = {"float32": 2e-3, "float64": 1e-10, "float16": 1e-2, "bfloat16": 4e-2}  # float32 allows TF32 (the default)
CUDA_IMPLS = ["cudnn:conv", "native:depthwise", "ref:cuda"]


def on_gpu(x, dtype):
    return backplane.asarray(np.ascontiguousarray(x), device="cuda").to(dtype)


def host(t):
    return np.asarray(t.to("cpu").to("float64").numpy())


def rand(shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32)


def rounded(x, dtype):
    return host(on_gpu(x, dtype))


def close(got, want, dtype, reduction):
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(host(got) - want).max()) / scale
    assert err <= TOL[dtype] * max(1.0, np.sqrt(reduction) / 4), err


CASES = [  # n, c, k, groups, size, kernel, stride, padding, dilation
    (2, 16, 32, 1, (17, 13), (3, 3), 1, 1, 1),
    (1, 8, 8, 8, (20, 20), (3, 3), 2, 1, 1),      # depthwise
    (2, 32, 64, 32, (14, 14), (5, 5), 1, 2, 1),   # depthwise, multiplier 2
    (1, 6, 4, 2, (9, 11), (3, 2), 2, 0, 2),
    (3, 5, 7, 1, (8, 8), (1, 1), 1, 0, 1),
]


@pytest.mark.parametrize("impl", CUDA_IMPLS)
@pytest.mark.parametrize("dtype", list(TOL))
def test_forward_matches_the_oracle_or_says_why(impl, dtype):
    ran = 0
    with B.implementations("conv", impl):
        for i, (n, c, k, g, size, kernel, s, p, d) in enumerate(CASES):
            x, w, b = rand((n, c) + size, i), rand((k, c // g) + kernel, 10 + i), rand((k,), 20 + i)
            xg, wg, bg = on_gpu(x, dtype), on_gpu(w, dtype), on_gpu(b, dtype)
            table = B.explain("conv2d", xg, wg, bg, stride=s, padding=p, dilation=d, groups=g)
            if table.chosen is None:
                assert table.row(impl).reasons
                continue
            out = F.conv2d(xg, wg, bg, stride=s, padding=p, dilation=d, groups=g)
            want = conv(rounded(x, dtype), rounded(w, dtype), rounded(b, dtype), s, p, d, g)
            close(out, want, dtype, c // g * np.prod(kernel))
            ran += 1
    if impl == "ref:cuda":
        assert ran == len(CASES)


@pytest.mark.parametrize("impl", ["cudnn:conv", "ref:cuda"])
def test_transposed_and_3d(impl):
    x, w, b = rand((2, 6, 5, 7), 1), rand((6, 4, 3, 3), 2), rand((4,), 3)
    with B.implementations("conv", impl):
        out = F.conv_transpose2d(on_gpu(x, "float64"), on_gpu(w, "float64"), on_gpu(b, "float64"), stride=2,
                                 padding=1, output_padding=1)
    close(out, conv_transpose(x, w, b, 2, 1, 1), "float64", 54)
    x3, w3 = rand((1, 3, 6, 7, 5), 4), rand((4, 3, 3, 3, 3), 5)
    with B.implementations("conv", impl):
        out3 = F.conv3d(on_gpu(x3, "float64"), on_gpu(w3, "float64"), padding=1)
    close(out3, conv(x3, w3, None, 1, 1), "float64", 81)


def depthwise_call(dtype="float32"):
    x, w = on_gpu(rand((1, 32, 28, 28), 1), dtype), on_gpu(rand((32, 1, 3, 3), 2), dtype)
    return (x, w), {"padding": 1, "groups": 32}


def test_depthwise_kernel_chooses_between_cudnn_and_native():
    args, kw = depthwise_call()
    assert B.explain("conv2d", *args, **kw).chosen == "native:depthwise"  # auto, float32 NCHW: PyTorch's native
    with B.cudnn.flags(enabled=True, depthwise_kernel="cudnn"):
        assert B.explain("conv2d", *args, **kw).chosen == "cudnn:conv"
    with B.cudnn.flags(enabled=True, depthwise_kernel="native"):
        assert B.explain("conv2d", *args, **kw).chosen == "native:depthwise"
    with B.cudnn.flags(enabled=False, depthwise_kernel="cudnn"):
        assert B.explain("conv2d", *args, **kw).chosen == "native:depthwise"
    x, w = on_gpu(rand((1, 16, 8, 8), 3), "float32"), on_gpu(rand((16, 16, 3, 3), 4), "float32")
    assert B.explain("conv2d", x, w).chosen == "cudnn:conv"
    with B.cudnn.flags(enabled=False):
        assert B.explain("conv2d", x, w).chosen == "ref:cuda"


def test_tf32_permission_and_determinism():
    x, w = rand((4, 64, 32, 32), 1), rand((64, 64, 3, 3), 2)
    xg, wg = on_gpu(x, "float32"), on_gpu(w, "float32")
    want = conv(x, w, None, 1, 1)
    with B.implementations("conv", "cudnn:conv"):
        B.cudnn.conv.fp32_precision = "ieee"
        try:
            exact = host(F.conv2d(xg, wg, padding=1))
        finally:
            B.cudnn.conv.fp32_precision = "tf32"
        assert np.abs(exact - want).max() < 1e-3
        with B.cudnn.flags(enabled=True, deterministic=True):
            first = host(F.conv2d(xg, wg, padding=1))
            assert all(np.array_equal(first, host(F.conv2d(xg, wg, padding=1))) for _ in range(3))


def test_benchmark_tunes_once_and_a_new_process_reuses_the_plan(tmp_path):
    path = tmp_path / "cache.txt"
    code = ("import numpy as np, backplane, backplane.backends as B; B.cudnn.benchmark = True; "
            "x = backplane.asarray(np.ones((2, 32, 20, 20), np.float32), device='cuda'); "
            "w = backplane.asarray(np.ones((48, 32, 3, 3), np.float32), device='cuda'); "
            "backplane.nn.functional.conv2d(x, w, padding=1); "
            "print([n for n in B.explain('conv2d', x, w, padding=1).notes if 'workspace' in n])")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), BACKPLANE_AUTOTUNE_CACHE=str(path))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    lines = [line for line in path.read_text().splitlines() if line.startswith("conv/cudnn:conv\t")]
    assert len(lines) == 1 and "\tplan " in lines[0], path.read_text()
    assert "workspace" in first.stdout
    before = path.read_text()
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    # The same plan, not timed again: the detail line is unchanged (its time field included).
    assert [l for l in path.read_text().splitlines() if l.startswith("conv/cudnn:conv\t")] == lines
    assert before.count("conv/cudnn:conv") == 1


def test_against_torch_where_importable():
    torch = pytest.importorskip("torch")
    x, w, b = rand((2, 16, 30, 30), 1), rand((32, 16, 3, 3), 2), rand((32,), 3)
    tx = torch.from_numpy(x).cuda().to(memory_format=torch.channels_last)
    ours = F.conv2d(backplane.from_dlpack(tx), on_gpu(w, "float32"), on_gpu(b, "float32"), padding=1)
    assert ours.strides[1] == 1  # channels-last in, channels-last out
    theirs = torch.nn.functional.conv2d(tx, torch.from_numpy(w).cuda(), torch.from_numpy(b).cuda(), padding=1)
    np.testing.assert_allclose(host(ours), theirs.double().cpu().numpy(), rtol=2e-3, atol=2e-3)
