"""cudnn:rnn on a real GPU (scripts/gpu-check): flatten_parameters into
cuDNN's weight space (the views' data pointers at cudnnGetRNNWeightParams'
offsets), every mode, projection, bidirectional, stacked, variable lengths,
against the float64 NumPy oracle of the CPU tests (tests/python/rnn_oracle.py),
our CPU path and, where importable, PyTorch on the GPU; the TF32 permission
(cudnn.rnn.fp32_precision) and cudnn.enabled. Skipped without a GPU."""

import pathlib
import sys
import warnings

import numpy as np
import pytest

from gpu_common import needs_torch, requires_cuda, torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "python"))

import backplane  # noqa: E402
import backplane.backends as B  # noqa: E402
import rnn_oracle  # noqa: E402
from backplane import nn  # noqa: E402
from backplane.backends.cudnn import rnn as cudnn_rnn  # noqa: E402
from backplane.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402

pytestmark = requires_cuda
TOL = {"float64": 1e-10, "float32": 3e-3, "float16": 2e-2}  # float32 may use TF32 (the default permission)
MODES = {"RNN_TANH": (nn.RNN, {}), "RNN_RELU": (nn.RNN, {"nonlinearity": "relu"}), "LSTM": (nn.LSTM, {}),
         "GRU": (nn.GRU, {})}


def host(t):
    return np.asarray(t.to("cpu").to("float64"))


def state64(m):
    return {k: np.asarray(v, dtype=np.float64) for k, v in m.state_dict().items()}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dtype", list(TOL))
def test_cudnn_matches_the_oracle(mode, dtype):
    cls, extra = MODES[mode]
    kw = {"proj_size": 3} if mode == "LSTM" else {}
    m = cls(5, 8, num_layers=2, bidirectional=True, dtype=dtype, **extra, **kw).cuda()
    assert m._is_packed() and m._flat_buffer.device.startswith("cuda")
    total, layout = cudnn_rnn.get_weight_layout(mode, 5, 8, 2, bidirectional=True, dtype=dtype, device="cuda", **kw)
    assert m._flat_buffer.shape == (total,)
    for name, (offset, shape) in layout.items():
        assert getattr(m, name).data_ptr() == m._flat_buffer.data_ptr() + offset * m._flat_buffer.itemsize
    x = np.random.default_rng(1).standard_normal((6, 3, 5))
    table = B.explain("rnn", backplane.asarray(x, dtype=dtype, device="cuda"), m._flat_buffer, mode=mode,
                      input_size=5, hidden_size=8, num_layers=2, bidirectional=True, **kw)
    assert table.chosen == "cudnn:rnn", str(table)
    out, state = m(backplane.asarray(x, dtype=dtype, device="cuda"))
    ref = rnn_oracle.run(mode, state64(m), host(backplane.asarray(x).to(dtype)), 2, True)
    np.testing.assert_allclose(host(out), ref[0], atol=TOL[dtype], rtol=TOL[dtype])
    h = state[0] if mode == "LSTM" else state
    np.testing.assert_allclose(host(h), ref[1], atol=TOL[dtype], rtol=TOL[dtype])


def test_variable_lengths_and_cpu_agreement():
    m = nn.LSTM(4, 6, bidirectional=True, dtype="float64")
    x = np.random.default_rng(2).standard_normal((5, 3, 4))
    lengths = [2, 5, 3]
    cpu_out, (cpu_h, _) = m(pack_padded_sequence(backplane.asarray(x), lengths, enforce_sorted=False))
    m.cuda()
    gpu_out, (gpu_h, _) = m(pack_padded_sequence(backplane.asarray(x, device="cuda"), lengths, enforce_sorted=False))
    np.testing.assert_allclose(host(pad_packed_sequence(gpu_out)[0]), host(pad_packed_sequence(cpu_out)[0]), atol=1e-12)
    np.testing.assert_allclose(host(gpu_h), host(cpu_h), atol=1e-12)


def test_unpacked_weights_warn_once_on_cuda():
    m = nn.GRU(3, 4).cuda()
    m.weight_hh_l0 = backplane.asarray(np.zeros((12, 4), np.float32), device="cuda")
    x = backplane.asarray(np.ones((2, 1, 3), np.float32), device="cuda")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m(x)
        m(x)
    assert len(caught) == 1 and "single contiguous chunk" in str(caught[0].message)


def test_cudnn_disabled_says_why():
    m = nn.GRU(3, 4).cuda()
    x = backplane.asarray(np.ones((2, 1, 3), np.float32), device="cuda")
    with B.cudnn.flags(enabled=False):
        table = B.explain("rnn", x, m._flat_buffer, mode="GRU", input_size=3, hidden_size=4)
        assert table.chosen is None and "cudnn.enabled" in str(table)


@needs_torch
def test_against_pytorch_on_the_gpu():
    torch.manual_seed(0)
    t = torch.nn.LSTM(4, 8, num_layers=2, bidirectional=True, proj_size=3).double().cuda()
    m = nn.LSTM(4, 8, num_layers=2, bidirectional=True, proj_size=3, dtype="float64")
    m.load_state_dict({k: v.cpu() for k, v in t.state_dict().items()})
    m.cuda()
    x = torch.randn(5, 2, 4, dtype=torch.float64, device="cuda")
    with torch.no_grad():
        ty, (th, tc) = t(x)
    by, (bh, bc) = m(backplane.asarray(x.cpu().numpy(), device="cuda"))
    np.testing.assert_allclose(host(by), ty.cpu().numpy(), atol=1e-10)
    np.testing.assert_allclose(host(bc), tc.cpu().numpy(), atol=1e-10)
