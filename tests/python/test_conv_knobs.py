"""Each knob that governs convolution changes what runs, as documented
(docs/dispatch.md, the conv section): mkldnn.enabled, mkldnn.deterministic,
use_deterministic_algorithms (and warn_only), the fp32 precision of
(mkldnn, conv) and matmul's for im2col's products, the CPU capability cap,
cpu.benchmark and its limit, and the autotune cache: saved by one process,
reused by a new one without timing, re-tuned when a flag value changes. The
cuDNN knobs are read by the CUDA rows' declarations (backplane info)."""

import numpy as np
import pytest

import backplane
from backplane import _C, backends
from conftest import cpu_has, first_available, onednn_has_bf16, run_python
from conv_oracle import conv

F = backplane.nn.functional
RNG = np.random.default_rng(5)

pytestmark = pytest.mark.usefixtures("no_leaked_overrides")


def nhwc(arr):
    return np.ascontiguousarray(arr.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


# A 3x3 unit-stride layer no order rule moves (12 tiles, but 8 channels: Note [Conv default order]).
X3 = nhwc(RNG.uniform(-1, 1, (2, 8, 12, 8)).astype(np.float32))
W3 = RNG.uniform(-1, 1, (8, 8, 3, 3)).astype(np.float32)
XD = nhwc(RNG.uniform(-1, 1, (2, 16, 12, 12)).astype(np.float32))  # a depthwise layer, stride 2
WD = RNG.uniform(-1, 1, (16, 1, 3, 3)).astype(np.float32)
DEPTHWISE = {"stride": 2, "padding": 1, "groups": 16}


def chosen(x=X3, w=W3, **kw):
    return backends.explain("conv2d", x, w, **({"padding": 1} if not kw else kw)).chosen


def reasons(impl, x=X3, w=W3, **kw):
    return backends.explain("conv2d", x, w, **({"padding": 1} if not kw else kw)).row(impl).reasons


def test_default_order_is_onednn_then_backplanes_kernels():
    names = [i.name for i in backends.list_implementations("conv")]
    assert names == ["onednn:conv", "winograd:f4x3", "direct:avx512", "direct:avx2", "direct:generic", "im2col:gemm",
                     "cudnn:conv", "native:depthwise", "ref:cuda", "ref:any"]
    assert chosen() == "onednn:conv"


def test_mkldnn_enabled():
    with backends.mkldnn.flags(enabled=False):
        assert reasons("onednn:conv") == ["enabled: expected mkldnn.enabled = True, got False"]
        assert chosen() == "winograd:f4x3"                      # 3x3, unit stride
        assert chosen(XD, WD, **DEPTHWISE).startswith("direct:")  # depthwise


def test_mkldnn_deterministic_rejects_onednn():
    with backends.mkldnn.flags(enabled=True, deterministic=True):
        assert reasons("onednn:conv")[0].startswith("deterministic: expected mkldnn.deterministic = False")
        assert chosen() == "winograd:f4x3"
    assert chosen() == "onednn:conv"


def test_use_deterministic_algorithms_excludes_onednn_and_warn_only_warns():
    proc = run_python(
        "import warnings, numpy as np, backplane; from backplane import backends\n"
        "x = np.ones((2, 4, 12, 12), np.float32); w = np.ones((4, 4, 3, 3), np.float32)\n"
        "backplane.use_deterministic_algorithms(True)\n"
        "t = backends.explain('conv2d', x, w, padding=1)\n"
        "print(t.chosen, t.row('onednn:conv').reasons)\n"
        "backplane.use_deterministic_algorithms(True, warn_only=True)\n"
        "backplane.nn.functional.conv2d(x, w, padding=1)\n"
        "print(backends.explain('conv2d', x, w, padding=1).chosen)\n")
    first, second = proc.stdout.splitlines()
    assert first.startswith("winograd:f4x3") and "deterministic: expected a deterministic implementation" in first
    assert second == "onednn:conv"
    # The op ran without the GIL, so the warning went to stderr, once.
    assert proc.stderr.count("conv ran onednn:conv, which is not deterministic") == 1, proc.stderr


def test_conv_fp32_precision_bf16_lets_onednn_use_bf16():
    want = conv(X3, W3, None, 1, 1)
    with backends.implementations("conv", "onednn:conv"):
        exact = F.conv2d(X3, W3, padding=1).numpy()
        backends.mkldnn.conv.fp32_precision = "bf16"
        try:
            note = backends.explain("conv2d", X3, W3, padding=1).notes
            rounded = F.conv2d(X3, W3, padding=1).numpy()
        finally:
            backends.mkldnn.conv.fp32_precision = "none"
    assert any("permits bf16" in n for n in note)
    assert np.abs(exact - want).max() < 1e-4
    if onednn_has_bf16():
        assert 1e-4 < np.abs(rounded - want).max() < 0.5  # bf16 operands, fp32 sums
    else:  # a permission with no taker: exact, and explain says why
        assert np.array_equal(rounded, exact) and any("has no bf16" in n for n in note)
    # Inherited from the backend node, as the precision tree says; matmul's "medium" leaves conv exact.
    backends.mkldnn.fp32_precision = "bf16"
    try:
        assert backplane.backends.mkldnn.conv.fp32_precision == "bf16"
    finally:
        _C.flag_reset("mkldnn.fp32_precision")
    backplane.set_float32_matmul_precision("medium")
    try:
        with backends.implementations("conv", "onednn:conv"):
            assert np.abs(F.conv2d(X3, W3, padding=1).numpy() - want).max() < 1e-4
        with backends.implementations("conv", "im2col:gemm"):  # its products follow matmul's precision
            err = np.abs(F.conv2d(X3, W3, padding=1).numpy() - want).max()
            # ... and so run in bf16 only where a matmul implementation has bf16 arithmetic
            assert err > 1e-4 if (cpu_has("avx512_bf16") or onednn_has_bf16()) else err < 1e-4
    finally:
        backplane.set_float32_matmul_precision("highest")


def test_cpu_capability_cap_limits_the_kernels():
    proc = run_python(
        "import numpy as np, backplane; from backplane import backends\n"
        "x = np.random.default_rng(0).uniform(-1, 1, (1, 8, 9, 9)).astype(np.float32)\n"
        "w = np.random.default_rng(1).uniform(-1, 1, (8, 8, 3, 3)).astype(np.float32)\n"
        "t = backends.explain('conv2d', x, w, padding=1)\n"
        "print(t.row('direct:avx2').reasons)\n"
        "with backends.implementations('conv', 'direct', 'winograd'):\n"
        "    print(backends.explain('conv2d', x, w, padding=1, groups=1, stride=2).chosen)\n"
        "    a = backplane.nn.functional.conv2d(x, w, padding=1).numpy()\n"
        "with backends.implementations('conv', 'ref:any'):\n"
        "    b = backplane.nn.functional.conv2d(x, w, padding=1).numpy()\n"
        "print(float(abs(a - b).max()))\n", env={"ATEN_CPU_CAPABILITY": "default"})
    lines = proc.stdout.splitlines()
    # AVX2 is the lowest vector kernel: present on every x86-64 CPU this runs on, so the cap (not the hardware) rejects it
    assert "capability: expected" in lines[0]
    assert lines[1] == "direct:generic"
    assert float(lines[2]) < 1e-4


def test_benchmark_times_the_candidates_and_the_limit_bounds_them():
    backends.autotune_cache.clear()
    before = _C.autotune_runs()
    backends.cpu.benchmark, backends.cpu.benchmark_limit = True, 1  # restored by the conftest fixture
    with backends.implementations("conv", "direct", "im2col"):
        F.conv2d(XD, WD, **DEPTHWISE)
        table = backends.explain("conv2d", XD, WD, **DEPTHWISE)
    assert _C.autotune_runs() == before + 1
    # limit 1: only the first candidate in the list (the widest direct kernel this CPU has) is timed
    assert table.how == "autotune cache" and table.chosen == first_available("conv", "direct:")
    backends.cpu.benchmark_limit = 0
    F.conv2d(XD, WD, **DEPTHWISE)
    table = backends.explain("conv2d", XD, WD, **DEPTHWISE)
    # conv's own timing, and matmul's for im2col:gemm's products (cpu.benchmark governs matmul too)
    assert _C.autotune_runs() >= before + 2
    assert table.how == "autotune cache" and table.chosen != "ref:any"  # the reference is never a contender


TUNE = ("import numpy as np, backplane; from backplane import _C, backends\n"
        "backends.cpu.benchmark = True\n"
        "x = np.ones((2, 16, 10, 10), np.float32); w = np.ones((16, 16, 3, 3), np.float32)\n"
        "{setup}"
        "backplane.nn.functional.conv2d(x, w, padding=1)\n"
        "t = backends.explain('conv2d', x, w, padding=1)\n"
        "print(_C.autotune_runs(), t.how, t.chosen, sep='|')\n")


def test_a_saved_cache_is_reused_by_a_new_process_and_a_changed_flag_retunes(tmp_path):
    path = tmp_path / "conv.cache"
    env = {"BACKPLANE_AUTOTUNE_CACHE": str(path)}
    runs, how, winner = run_python(TUNE.format(setup=""), env=env).stdout.strip().split("|")
    # Timed (conv's candidates, and matmul's for im2col:gemm's products), saved at exit.
    assert int(runs) >= 1 and how == "autotune cache" and winner != "ref:any"
    assert any(line.startswith("conv\t") for line in path.read_text().splitlines())
    # A new process loads the file and takes the winner without timing anything.
    assert run_python(TUNE.format(setup=""), env=env).stdout.strip().split("|") == ["0", "autotune cache", winner]
    # A flag the conv rows read (mkldnn.enabled) is part of the key: a new value times again.
    runs, how, other = run_python(TUNE.format(setup="backends.mkldnn.enabled = False\n"), env=env).stdout.strip().split("|")
    assert int(runs) >= 1 and other != "onednn:conv"


def test_cudnn_knobs_are_read_by_conv():
    for path in ("cudnn.enabled", "cudnn.benchmark", "cudnn.benchmark_limit", "cudnn.deterministic",
                 "cudnn.conv.fp32_precision", "cudnn.depthwise_kernel", "mkldnn.enabled", "mkldnn.deterministic",
                 "mkldnn.conv.fp32_precision"):
        readers = _C.flag_readers(path)
        assert any(r.startswith("conv ") for r in readers), (path, readers)
