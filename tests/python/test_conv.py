"""backplane.nn.functional.conv{1,2,3}d / conv_transpose{1,2,3}d against an
independent float64 NumPy oracle (conv_oracle.py): every implementation forced
in turn over sampled combinations of stride, padding, dilation, groups, odd
sizes, channels-last and strided inputs and each dtype it claims; the
transposed forms also against the adjoint identity; NaN/Inf; semantics and
PyTorch's errors."""

import contextlib
import itertools

import ml_dtypes
import numpy as np
import pytest

import backplane
from backplane import backends
from conv_oracle import conv, conv_transpose

F = backplane.nn.functional
IMPLS = [i.name for i in backends.list_implementations("conv") if i.available and i.backend not in ("cuda", "cudnn")]
DTYPES = {"float32": (np.float32, 2e-6), "float64": (np.float64, 1e-13),
          "float16": (np.float16, 2e-3), "bfloat16": (ml_dtypes.bfloat16, 1.6e-2)}
# Winograd's transforms round more than a direct sum does (conv_winograd.h).
TOL_FACTOR = {"winograd:f4x3": 16}
FUNCS = {(1, False): F.conv1d, (2, False): F.conv2d, (3, False): F.conv3d,
         (1, True): F.conv_transpose1d, (2, True): F.conv_transpose2d, (3, True): F.conv_transpose3d}

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def make_cases(seed, count, spatial, transposed):
    """Valid problems drawn at random: odd sizes, every argument kind."""
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        groups = int(rng.choice([1, 1, 2, 3]))
        cg, kg = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        kernel = tuple(int(rng.integers(1, 4)) for _ in range(spatial))
        stride = tuple(int(rng.integers(1, 3)) for _ in range(spatial))
        dilation = tuple(int(rng.integers(1, 3)) for _ in range(spatial))
        sizes = tuple(int(rng.integers(3, 9 if spatial < 3 else 6)) for _ in range(spatial))
        case = dict(spatial=spatial, transposed=transposed, n=int(rng.integers(1, 3)), c=cg * groups,
                    k=kg * groups, groups=groups, kernel=kernel, sizes=sizes, stride=stride, dilation=dilation,
                    bias=bool(rng.integers(0, 2)), layout=str(rng.choice(["dense", "channels_last", "strided"])))
        if transposed:
            case["padding"] = tuple(int(rng.integers(0, 2)) for _ in range(spatial))
            case["output_padding"] = tuple(int(rng.integers(0, max(stride[i], dilation[i])))
                                           for i in range(spatial))
            outs = [(sizes[i] - 1) * stride[i] - 2 * case["padding"][i] + dilation[i] * (kernel[i] - 1)
                    + case["output_padding"][i] + 1 for i in range(spatial)]
            if min(outs) < 1:
                continue
        else:
            case["padding"] = rng.choice(["same", "valid", "ints"]) if stride == (1,) * spatial else "ints"
            if case["padding"] == "ints":
                case["padding"] = tuple(int(rng.integers(0, 3)) for _ in range(spatial))
            pad = case["padding"]
            lohi = [0] * spatial if pad in ("same", "valid") else [2 * p for p in pad]
            if pad == "same":
                lohi = [dilation[i] * (kernel[i] - 1) for i in range(spatial)]
            if any(sizes[i] + lohi[i] < dilation[i] * (kernel[i] - 1) + 1 for i in range(spatial)):
                continue
        cases.append(case)
    return cases


FIXED = [  # tile edges, 1x1, depthwise, 3x3 unit stride, a large stride
    dict(spatial=2, transposed=False, n=2, c=5, k=7, groups=1, kernel=(3, 3), sizes=(11, 13), stride=(1, 1),
         dilation=(1, 1), padding=(1, 1), bias=True, layout="channels_last"),
    dict(spatial=2, transposed=False, n=1, c=19, k=17, groups=1, kernel=(3, 3), sizes=(9, 10), stride=(1, 1),
         dilation=(1, 1), padding=(1, 1), bias=False, layout="dense"),
    dict(spatial=2, transposed=False, n=2, c=6, k=6, groups=6, kernel=(3, 3), sizes=(7, 9), stride=(2, 2),
         dilation=(1, 1), padding=(1, 1), bias=True, layout="channels_last"),
    dict(spatial=2, transposed=False, n=1, c=18, k=36, groups=18, kernel=(5, 5), sizes=(9, 8), stride=(1, 1),
         dilation=(1, 1), padding=(2, 2), bias=False, layout="dense"),
    dict(spatial=2, transposed=False, n=2, c=33, k=20, groups=1, kernel=(1, 1), sizes=(5, 6), stride=(1, 1),
         dilation=(1, 1), padding=(0, 0), bias=True, layout="channels_last"),
    dict(spatial=2, transposed=False, n=1, c=3, k=18, groups=1, kernel=(7, 7), sizes=(17, 15), stride=(2, 2),
         dilation=(1, 1), padding=(3, 3), bias=False, layout="dense"),
    dict(spatial=2, transposed=False, n=3, c=16, k=32, groups=1, kernel=(3, 3), sizes=(10, 17), stride=(1, 1),
         dilation=(1, 1), padding="same", bias=True, layout="channels_last"),
    dict(spatial=2, transposed=False, n=1, c=4, k=4, groups=1, kernel=(2, 4), sizes=(6, 9), stride=(1, 1),
         dilation=(2, 1), padding="same", bias=True, layout="dense"),
    # channels-last products whose weight im2col:gemm views instead of reordering (Note [Channels-last
    # weight rows]): 1x1 with channel-strided weights (grouped, strided), weights stored channels-last
    dict(spatial=2, transposed=False, n=2, c=12, k=10, groups=1, kernel=(1, 1), sizes=(5, 7), stride=(1, 1),
         dilation=(1, 1), padding=(0, 0), bias=True, layout="channels_last", w_layout="strided"),
    dict(spatial=2, transposed=False, n=1, c=12, k=8, groups=2, kernel=(1, 1), sizes=(6, 5), stride=(2, 1),
         dilation=(1, 1), padding=(0, 0), bias=False, layout="channels_last", w_layout="strided"),
    dict(spatial=2, transposed=False, n=2, c=10, k=14, groups=1, kernel=(3, 3), sizes=(8, 9), stride=(1, 1),
         dilation=(1, 1), padding=(1, 1), bias=True, layout="channels_last", w_layout="channels_last"),
    dict(spatial=2, transposed=False, n=1, c=8, k=12, groups=4, kernel=(3, 2), sizes=(7, 6), stride=(2, 1),
         dilation=(1, 1), padding=(1, 0), bias=False, layout="channels_last", w_layout="channels_last"),
    dict(spatial=3, transposed=False, n=1, c=6, k=5, groups=1, kernel=(2, 1, 3), sizes=(3, 4, 6), stride=(1, 1, 1),
         dilation=(1, 1, 1), padding=(0, 0, 1), bias=True, layout="channels_last", w_layout="channels_last"),
    # depthwise on NCHW planes (the direct kernels' planar path): strides 2 and 3, dilation, 3-D
    dict(spatial=2, transposed=False, n=2, c=5, k=5, groups=5, kernel=(3, 3), sizes=(11, 75), stride=(2, 2),
         dilation=(1, 2), padding=(1, 2), bias=True, layout="dense"),
    dict(spatial=2, transposed=False, n=1, c=3, k=3, groups=3, kernel=(5, 3), sizes=(9, 100), stride=(1, 3),
         dilation=(1, 1), padding=(2, 0), bias=False, layout="strided"),
    dict(spatial=3, transposed=False, n=1, c=4, k=4, groups=4, kernel=(2, 3, 3), sizes=(4, 6, 70), stride=(1, 1, 2),
         dilation=(1, 1, 1), padding=(1, 1, 1), bias=True, layout="dense"),
    dict(spatial=1, transposed=False, n=2, c=6, k=6, groups=6, kernel=(4,), sizes=(81,), stride=(1,),
         dilation=(3,), padding=(5,), bias=True, layout="dense"),
    # Winograd's domain: tiles cut by the edges, every padding, channel tails
    dict(spatial=2, transposed=False, n=2, c=21, k=35, groups=1, kernel=(3, 3), sizes=(13, 9), stride=(1, 1),
         dilation=(1, 1), padding=(0, 2), bias=True, layout="channels_last"),
    dict(spatial=2, transposed=False, n=1, c=3, k=5, groups=1, kernel=(3, 3), sizes=(3, 4), stride=(1, 1),
         dilation=(1, 1), padding=(1, 0), bias=False, layout="strided"),
    dict(spatial=2, transposed=False, n=3, c=8, k=16, groups=1, kernel=(3, 3), sizes=(16, 12), stride=(1, 1),
         dilation=(1, 1), padding=(2, 1), bias=True, layout="dense"),
]

CASES = FIXED + make_cases(1, 14, 2, False) + make_cases(2, 6, 1, False) + make_cases(3, 5, 3, False) + \
    make_cases(4, 8, 2, True) + make_cases(5, 4, 1, True) + make_cases(6, 4, 3, True)


def rand(shape, np_dtype, rng):
    return rng.uniform(-1, 1, size=shape).astype(np_dtype)


def layout(arr, kind, rng):
    """The array as a dense NC..., channels-last (N...C memory) or strided view."""
    if kind == "channels_last" and arr.ndim >= 4:
        perm = (0,) + tuple(range(2, arr.ndim)) + (1,)
        inverse = np.argsort(perm)
        return np.ascontiguousarray(arr.transpose(perm)).transpose(inverse)
    if kind == "strided":
        big = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2,), arr.dtype)
        big[..., ::2] = arr
        return big[..., ::2]
    return arr


def inputs(case, np_dtype, rng):
    sp = case["spatial"]
    x = rand((case["n"], case["c"]) + case["sizes"], np_dtype, rng)
    if case["transposed"]:
        w = rand((case["c"], case["k"] // case["groups"]) + case["kernel"], np_dtype, rng)
    else:
        w = rand((case["k"], case["c"] // case["groups"]) + case["kernel"], np_dtype, rng)
    b = rand((case["k"],), np_dtype, rng) if case["bias"] else None
    assert sp == x.ndim - 2
    # Weights come dense, channels-last (as to(memory_format=channels_last)
    # leaves a model's) or strided: kernels that view the weight instead of
    # copying it must read each layout right.
    w_layout = case.get("w_layout") or ("dense", "channels_last", "strided")[int(rng.integers(3))]
    return layout(x, case["layout"], rng), weight_layout(w, w_layout), b


def weight_layout(w, kind):
    """As layout(), but "strided" steps over the input channels (dim 1), which a 1x1 kernel's view reads."""
    if kind != "strided":
        return layout(w, kind, None)
    big = np.zeros((w.shape[0], w.shape[1] * 2) + w.shape[2:], w.dtype)
    big[:, ::2] = w
    return big[:, ::2]


def call(case, x, w, b):
    f = FUNCS[(case["spatial"], case["transposed"])]
    if case["transposed"]:
        return f(x, w, b, stride=case["stride"], padding=case["padding"], output_padding=case["output_padding"],
                 groups=case["groups"], dilation=case["dilation"])
    return f(x, w, b, stride=case["stride"], padding=case["padding"], dilation=case["dilation"],
             groups=case["groups"])


def oracle(case, x, w, b):
    if case["transposed"]:
        return conv_transpose(x, w, b, case["stride"], case["padding"], case["output_padding"], case["groups"],
                              case["dilation"])
    return conv(x, w, b, case["stride"], case["padding"], case["dilation"], case["groups"])


def assert_close(got, want, tol, reduction):
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max(initial=0)))
    err = np.abs(got - want).max(initial=0) / scale
    assert err <= tol * max(1.0, np.sqrt(reduction)), (err, tol)


def case_id(case):
    kind = "T" if case["transposed"] else ""
    return f"{case['spatial']}d{kind}-g{case['groups']}-k{'x'.join(map(str, case['kernel']))}-" \
           f"s{'x'.join(map(str, case['stride']))}-{case['layout']}"


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_every_implementation_matches_the_oracle_or_says_why(impl, dtype):
    np_dtype, tol = DTYPES[dtype]
    tol *= TOL_FACTOR.get(impl, 1) if dtype in ("float32", "float64") else 1
    rng = np.random.default_rng(7)
    ran = 0
    with backends.implementations("conv", impl):
        for case in CASES:
            x, w, b = inputs(case, np_dtype, rng)
            args = (x, w, b)
            table = backends.explain(FUNCS[(case["spatial"], case["transposed"])].__name__, *args,
                                     **{k: case[k] for k in ("stride", "padding", "dilation", "groups")
                                        if k in case},
                                     **({"output_padding": case["output_padding"]} if case["transposed"] else {}))
            if table.chosen is None:
                assert table.row(impl).reasons, case_id(case)
                continue
            assert table.chosen == impl
            out = call(case, x, w, b)
            assert out.dtype == dtype
            red = case["c"] // case["groups"] * int(np.prod(case["kernel"]))
            assert_close(out.numpy(), oracle(case, x, w, b), tol, red)
            ran += 1
    print(impl, dtype, "ran", ran, "of", len(CASES))
    if impl in ("ref:any", "im2col:gemm"):
        assert ran == len(CASES)  # these accept every valid problem they claim


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [
    # (n, c, h, w, k): tiles' V and M past 4 MiB with a transformed weight under 16 MiB: blocks per
    # thread (Note [Winograd thread blocks]), the last one ragged (255 tiles), channels not whole vectors
    (1, 60, 65, 58, 70),
    # a weight past 16 MiB: one block for all threads at a time, over two blocks (80 tiles and 1)
    (1, 352, 36, 36, 352),
])
def test_winograd_over_several_tile_blocks(shape, threads):
    """Enough tiles (and wide enough channels) that the tiles go through in several blocks."""
    if "winograd:f4x3" not in IMPLS:
        pytest.skip("winograd:f4x3 not available")
    n, c, h, wd, k = shape
    rng = np.random.default_rng(3)
    x = layout(rand((n, c, h, wd), np.float32, rng), "channels_last", rng)
    w = rand((k, c, 3, 3), np.float32, rng) / 16
    b = rand((k,), np.float32, rng)
    saved = backplane.get_num_threads()
    backplane.set_num_threads(threads)
    try:
        with backends.implementations("conv", "winograd:f4x3"):
            got = F.conv2d(x, w, b, padding=1).numpy()
    finally:
        backplane.set_num_threads(saved)
    assert_close(got, conv(x, w, b, padding=1), DTYPES["float32"][1] * TOL_FACTOR["winograd:f4x3"], c * 9)


@contextlib.contextmanager
def winograd_only(cached):
    """winograd:f4x3 forced, with cpu.conv_weight_cache emptied and on (cached) or off; restored after."""
    cache = backends.cpu.conv_weight_cache
    max_size = cache.max_size
    cache.clear()
    cache.max_size = 256 if cached else 0
    try:
        with backends.implementations("conv", "winograd:f4x3"):
            yield
    finally:
        cache.max_size = max_size
        cache.clear()


@pytest.mark.parametrize("cached", [False, True])
@pytest.mark.parametrize("dtype,kind", [("float32", "nchw"), ("bfloat16", "nchw"), ("bfloat16", "channels_last")])
def test_winograd_stages_a_batch_a_few_images_at_a_time(dtype, kind, cached):
    """A staged batch past 4 MiB (6 images of 32 channels at 56 x 56) goes through in chunks of 5 and 1
    images while the weight's transform is kept (Note [Staging by images]), whole when it is not."""
    if "winograd:f4x3" not in IMPLS:
        pytest.skip("winograd:f4x3 not available")
    np_dtype, tol = DTYPES[dtype]
    rng = np.random.default_rng(9)
    x = layout(rand((6, 32, 56, 56), np_dtype, rng), kind, rng)
    w = (rand((32, 32, 3, 3), np.float32, rng) / 8).astype(np_dtype)
    b = rand((32,), np_dtype, rng)
    with winograd_only(cached):
        got = F.conv2d(x, w, b, padding=1).numpy()
    assert got.dtype == np_dtype
    assert_close(got, conv(x, w, b, padding=1), tol * TOL_FACTOR["winograd:f4x3"], 32 * 9)


@pytest.mark.parametrize("cached", [False, True])
@pytest.mark.parametrize("channels", [(250, 243), (256, 256)])
def test_winograd_weight_blocks(channels, cached):
    """Few tiles and a transformed weight larger than the caches: uncached, the output channels go a
    block at a time (Note [Winograd weight blocks]), the last block ragged, channels not multiples of a
    vector; cached, the whole transform is kept (Note [Winograd weight cache])."""
    if "winograd:f4x3" not in IMPLS:
        pytest.skip("winograd:f4x3 not available")
    c, k = channels
    rng = np.random.default_rng(5)
    x = layout(rand((1, c, 12, 13), np.float32, rng), "channels_last", rng)  # 12 tiles
    w = rand((k, c, 3, 3), np.float32, rng) / 16
    b = rand((k,), np.float32, rng)
    with winograd_only(cached):
        got = F.conv2d(x, w, b, padding=1).numpy()
        assert backends.cpu.conv_weight_cache.size == (1 if cached else 0)
    assert_close(got, conv(x, w, b, padding=1), DTYPES["float32"][1] * TOL_FACTOR["winograd:f4x3"], c * 9)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("impl", [i for i in IMPLS if i.startswith("direct:")])
def test_depthwise_planes_in_their_own_dtype(impl, dtype):
    """NCHW depthwise with rows of 32 or more read and written as planes in the input's dtype (Note [16-bit
    depthwise planes]): strides 1-3 (each stride's phases filled phase by phase), padding and dilation at the
    borders, an odd width, NaN and infinity each reaching only their outputs."""
    np_dtype, tol = DTYPES[dtype]
    rng = np.random.default_rng(12)
    x = rand((2, 5, 9, 67), np_dtype, rng)
    x[1, 2, 4, 30], x[0, 3, 2, 5] = np.nan, np.inf
    w, b = rand((5, 1, 3, 3), np_dtype, rng), rand((5,), np_dtype, rng)
    # rows 48 wide: whole vectors at a row's end on every width (Note [Depthwise row tails])
    x48 = np.ascontiguousarray(x[..., :48])
    with backends.implementations("conv", impl):
        for x, stride, padding, dilation in [(x, 1, 1, 1), (x, 2, 1, 1), (x, 3, 2, 2), (x, 2, 0, 1), (x48, 1, 1, 1)]:
            got = F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=5)
            assert got.dtype == dtype
            want = conv(x, w, b, stride, padding, dilation, 5)
            g = np.asarray(got.numpy(), np.float64)
            assert np.array_equal(np.isnan(g), np.isnan(want)) and np.array_equal(np.isinf(g), np.isinf(want))
            finite = np.isfinite(want)
            assert_close(np.where(finite, g, 0), np.where(finite, want, 0), tol, 9)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("impl", [i for i in IMPLS if i.startswith("direct:")])
def test_staging_by_images(impl, dtype):
    """A batch whose staged channels-last fp32 copies pass 4 MiB is staged, computed and stored back a few images
    at a time (Note [Staging by images]): 10 images of about 0.5 MiB staged each, in chunks of 8 and 2, NCHW and
    strided inputs, depthwise and grouped, against the float64 oracle; the last image's NaN stays in its outputs."""
    np_dtype, tol = DTYPES[dtype]
    rng = np.random.default_rng(21)
    x = rand((10, 64, 40, 40), np_dtype, rng)
    x[9, 3, 7, 7] = np.nan
    with backends.implementations("conv", impl):
        for groups, stride, view in [(64, 2, "dense"), (8, 1, "dense"), (64, 2, "strided")]:
            w, b = rand((64, 64 // groups, 3, 3), np_dtype, rng), rand((64,), np_dtype, rng)
            xi = layout(x, view, rng)
            got = np.asarray(F.conv2d(xi, w, b, stride=stride, padding=1, groups=groups).numpy(), np.float64)
            want = conv(x, w, b, stride, 1, 1, groups)
            assert np.array_equal(np.isnan(got), np.isnan(want))
            finite = np.isfinite(want)
            assert_close(np.where(finite, got, 0), np.where(finite, want, 0), tol, 9 * 64 // groups)
