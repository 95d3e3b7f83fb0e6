"""conv{1,2,3}d / conv_transpose{1,2,3}d semantics as torch.nn.functional's:
signatures, memory format of the output, batch-less inputs, 'same' / 'valid',
empty problems, the adjoint identity of the transposed forms, NaN/Inf, and
PyTorch's errors (the argument, the value and what is allowed); the CLI's
explain and bench of conv2d."""

import inspect
import subprocess

import numpy as np
import pytest

import backplane
from backplane import backends
from conftest import ROOT, clean_env
from conv_oracle import conv, conv_transpose

F = backplane.nn.functional
RNG = np.random.default_rng(11)
IMPLS = [i.name for i in backends.list_implementations("conv") if i.available and i.backend not in ("cuda", "cudnn")]

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def rand(*shape, dtype=np.float64):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def nhwc(arr):
    """arr ([N, C, ...]) with channels-last memory."""
    perm = (0,) + tuple(range(2, arr.ndim)) + (1,)
    return np.ascontiguousarray(arr.transpose(perm)).transpose(np.argsort(perm))


def test_signatures_are_torchs():
    assert str(inspect.signature(F.conv2d)) == "(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)"
    assert str(inspect.signature(F.conv_transpose2d)) == \
        "(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1)"
    for name in ("conv1d", "conv3d", "conv_transpose1d", "conv_transpose3d"):
        assert callable(getattr(F, name))


def test_output_keeps_the_input_memory_format():
    x, w = rand(2, 5, 7, 6, dtype=np.float32), rand(4, 5, 3, 3, dtype=np.float32)
    out = F.conv2d(nhwc(x), w, padding=1)
    assert out.strides == (7 * 6 * 4, 1, 6 * 4, 4)  # channels-last in, channels-last out
    assert F.conv2d(x, w, padding=1).is_contiguous()
    assert F.conv2d(x, nhwc(w), padding=1).strides[1] == 1  # PyTorch: a channels-last weight counts too
    np.testing.assert_allclose(out.numpy(), conv(x, w, None, 1, 1), rtol=1e-5, atol=1e-5)
    x3, w3 = rand(1, 3, 4, 5, 6, dtype=np.float32), rand(2, 3, 1, 2, 2, dtype=np.float32)
    assert F.conv3d(nhwc(x3), w3).strides[1] == 1


def test_batchless_inputs():
    x, w, b = rand(3, 9), rand(4, 3, 2), rand(4)
    out = F.conv1d(x, w, b, stride=2)
    assert out.shape == (4, 4)
    np.testing.assert_allclose(out.numpy(), conv(x[None], w, b, 2)[0], rtol=1e-12)
    x2, w2 = rand(3, 6, 5), rand(2, 3, 3, 3)
    np.testing.assert_allclose(F.conv2d(x2, w2, padding="same").numpy(), conv(x2[None], w2, None, 1, "same")[0],
                               rtol=1e-12)
    t = F.conv_transpose2d(x2, rand(3, 2, 2, 2), stride=2)
    assert t.shape == (2, 12, 10)


@pytest.mark.parametrize("kernel,dilation", [((2, 4), (1, 1)), ((3, 2), (2, 3)), ((1, 1), (1, 1))])
def test_same_and_valid_padding(kernel, dilation):
    x, w = rand(2, 3, 8, 9), rand(5, 3, *kernel)
    same = F.conv2d(x, w, padding="same", dilation=dilation)
    assert same.shape == (2, 5, 8, 9)  # even extents pad the right more, as PyTorch
    np.testing.assert_allclose(same.numpy(), conv(x, w, None, 1, "same", dilation), rtol=1e-12, atol=1e-12)
    valid = F.conv2d(x, w, padding="valid", dilation=dilation)
    np.testing.assert_allclose(valid.numpy(), conv(x, w, None, 1, 0, dilation), rtol=1e-12, atol=1e-12)


def test_tuples_and_single_values_expand():
    x, w = rand(1, 2, 9, 8), rand(2, 2, 3, 3)
    a = F.conv2d(x, w, stride=(2,), padding=[1], dilation=(1, 1))
    b = F.conv2d(x, w, stride=2, padding=1, dilation=1)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = F.conv2d(x, w, stride=(1, 2), padding=(0, 1), dilation=(2, 1))
    np.testing.assert_allclose(c.numpy(), conv(x, w, None, (1, 2), (0, 1), (2, 1)), rtol=1e-12)


def test_empty_problems():
    assert F.conv2d(np.zeros((0, 3, 5, 5)), rand(4, 3, 3, 3)).shape == (0, 4, 3, 3)
    assert F.conv2d(rand(2, 3, 5, 5), np.zeros((0, 3, 3, 3))).shape == (2, 0, 3, 3)
    b = rand(4)
    out = F.conv2d(np.zeros((1, 0, 5, 5)), np.zeros((4, 0, 3, 3)), b).numpy()  # no input channels: the bias
    np.testing.assert_array_equal(out, np.broadcast_to(b[None, :, None, None], (1, 4, 3, 3)))


# The adjoint identity <conv(x), y> = <x, conv_transpose(y)> for the weight
# and parameters they share, on every implementation that takes the transposed form.
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("spatial,stride,padding,dilation,groups",
                         [(1, 2, 1, 1, 1), (2, (2, 1), (1, 0), (1, 2), 2), (2, 3, 2, 1, 1), (3, 2, 1, 1, 3)])
def test_transposed_forms_are_the_adjoint(impl, spatial, stride, padding, dilation, groups):
    sizes = (9, 8, 7)[:spatial]
    x = rand(2, 3 * groups, *sizes)
    w = rand(2 * groups, 3, *(3,) * spatial)
    conv_f = getattr(F, f"conv{spatial}d")
    conv_t = getattr(F, f"conv_transpose{spatial}d")
    y_shape = conv(x, w, None, stride, padding, dilation, groups).shape
    y = rand(*y_shape)
    # output_padding recovers x's size where the stride rounds it away
    op = []
    for i in range(spatial):
        s = stride[i] if isinstance(stride, tuple) else stride
        p = padding[i] if isinstance(padding, tuple) else padding
        d = dilation[i] if isinstance(dilation, tuple) else dilation
        op.append(sizes[i] - ((y_shape[2 + i] - 1) * s - 2 * p + d * 2 + 1))
    with backends.implementations("conv", impl):
        if backends.explain(f"conv_transpose{spatial}d", y, w, stride=stride, padding=padding, output_padding=op,
                            groups=groups, dilation=dilation).chosen is None:
            pytest.skip(f"{impl} does not take transposed convolutions (explain says why)")
        xt = conv_t(y, w, stride=stride, padding=padding, output_padding=op, groups=groups, dilation=dilation).numpy()
        cx = conv_f(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups).numpy() \
            if backends.explain(f"conv{spatial}d", x, w, stride=stride, padding=padding, dilation=dilation,
                                groups=groups).chosen else conv(x, w, None, stride, padding, dilation, groups)
    assert xt.shape == x.shape
    lhs, rhs = float(np.vdot(cx, y)), float(np.vdot(x, xt))
    tol = 1e-3 if impl in ("onednn:conv", "winograd:f4x3") or impl.startswith("direct") else 1e-10
    assert abs(lhs - rhs) <= tol * max(1.0, abs(lhs)), (lhs, rhs)
    np.testing.assert_allclose(xt, conv_transpose(y, w, None, stride, padding, op, groups, dilation),
                               rtol=max(tol, 1e-6), atol=max(tol, 1e-6))


@pytest.mark.parametrize("impl", IMPLS)
def test_nan_and_inf_propagate(impl):
    x, w = rand(1, 4, 9, 9), rand(3, 4, 3, 3)
    x[0, 1, 4, 4] = np.nan
    x[0, 2, 0, 8] = np.inf
    x[0, 3, 8, 0] = -np.inf
    for dtype in (np.float32, np.float64):
        xs, ws = x.astype(dtype), w.astype(dtype)
        with backends.implementations("conv", impl):
            if backends.explain("conv2d", nhwc(xs), ws, padding=1).chosen is None:
                continue
            got = F.conv2d(nhwc(xs), ws, padding=1).numpy().astype(np.float64)
        with np.errstate(invalid="ignore"):
            want = conv(xs, ws, None, 1, 1)
        assert (np.isnan(got) == np.isnan(want)).all(), impl
        assert (np.isposinf(got) == np.isposinf(want)).all() and (np.isneginf(got) == np.isneginf(want)).all(), impl


ERRORS = [  # call, the error type, words the message must hold
    (lambda: F.conv2d(rand(3, 5), rand(2, 3, 3, 3)), ValueError, ["conv2d", "3D (unbatched) or 4D (batched)", "[3, 5]"]),
    (lambda: F.conv2d(rand(1, 3, 5, 5), rand(2, 3, 3)), ValueError, ["4-dimensional weight", "[2, 3, 3]"]),
    (lambda: F.conv2d(rand(1, 4, 5, 5), rand(2, 3, 3, 3)), ValueError, ["3 channels", "4 channels", "groups=1"]),
    (lambda: F.conv2d(rand(1, 4, 5, 5), rand(3, 2, 3, 3), groups=2), ValueError, ["divisible by 2", "[3, 2, 3, 3]"]),
    (lambda: F.conv2d(rand(1, 3, 5, 5), rand(2, 3, 3, 3), rand(3)), ValueError, ["bias", "2 elements", "[3]"]),
    (lambda: F.conv2d(rand(1, 3, 5, 5), rand(2, 3, 3, 3), padding=-1), ValueError, ["negative padding", "[-1, -1]"]),
    (lambda: F.conv2d(rand(1, 3, 5, 5), rand(2, 3, 3, 3), stride=(1, 0)), ValueError, ["stride", "[1, 0]"]),
    (lambda: F.conv2d(rand(1, 3, 5, 5), rand(2, 3, 3, 3), dilation=0), ValueError, ["dilation", "[0, 0]"]),
    (lambda: F.conv2d(rand(1, 3, 5, 5), rand(2, 3, 3, 3), groups=0), ValueError, ["groups=0"]),
    (lambda: F.conv2d(rand(1, 3, 2, 2), rand(2, 3, 3, 3)), ValueError, ["Kernel size can't be greater", "(2 x 2)"]),
    (lambda: F.conv2d(rand(1, 3, 8, 8), rand(2, 3, 3, 3), stride=2, padding="same"), ValueError,
     ["padding='same'", "strided"]),
    (lambda: F.conv2d(rand(1, 3, 8, 8), rand(2, 3, 3, 3), padding="full"), ValueError, ["padding", "'full'", "same"]),
    (lambda: F.conv2d(rand(1, 3, 8, 8), rand(2, 3, 3, 3), stride=(1, 1, 1)), ValueError,
     ["a list of 2 values", "stride=[1, 1, 1]"]),
    (lambda: F.conv2d(rand(1, 3, 8, 8), rand(2, 3, 3, 3, dtype=np.float32)), ValueError, ["float64", "float32"]),
    (lambda: F.conv2d(np.ones((1, 3, 8, 8), np.int32), np.ones((2, 3, 3, 3), np.int32)), ValueError, ["int32"]),
    (lambda: F.conv_transpose2d(rand(1, 3, 4, 4), rand(3, 2, 3, 3), stride=2, output_padding=2), ValueError,
     ["output padding", "smaller than either stride or dilation"]),
    (lambda: F.conv_transpose2d(rand(1, 3, 4, 4), rand(3, 2, 3, 3), padding="same"), TypeError,
     ["padding", "str"]),
    (lambda: F.conv_transpose2d(rand(1, 3, 2, 2), rand(3, 2, 3, 3), padding=3), ValueError, ["Output size is too small"]),
    (lambda: F.conv_transpose2d(rand(1, 4, 4, 4), rand(3, 2, 3, 3)), ValueError, ["3 channels", "4 channels"]),
    (lambda: F.conv1d(rand(1, 3, 0), rand(2, 3, 1)), ValueError, ["positive length"]),
]


@pytest.mark.parametrize("call,kind,words", ERRORS)
def test_errors_name_the_argument_and_value(call, kind, words):
    with pytest.raises(kind) as info:
        call()
    assert isinstance(info.value, RuntimeError) or kind is TypeError  # as PyTorch raises them
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_cli_explain_and_bench():
    tool = ROOT / "build" / "bin" / "backplane"
    if not tool.exists():
        pytest.skip("the CLI is not built")
    out = subprocess.run([str(tool), "explain", "conv2d", "--n", "2", "--c-in", "8", "--h", "9", "--w", "9",
                          "--c-out", "8", "--groups", "8", "--channels-last", "1"],
                         capture_output=True, text=True, env=clean_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    assert "conv: batch=2 groups=8 c_in=8 c_out=8" in out.stdout and "chosen" in out.stdout
    bench = subprocess.run([str(tool), "bench", "conv", "--shape", "1 8 9 9 8 3 1 0 1 1", "--dtype", "f32",
                            "--min-time", "1", "--repeat", "1", "--json"],
                           capture_output=True, text=True, env=clean_env(), timeout=300)
    assert bench.returncode == 0, bench.stderr
    assert '"onednn:conv"' in bench.stdout or '"direct:' in bench.stdout
