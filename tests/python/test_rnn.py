"""The rnn op and backplane.nn.RNN / LSTM / GRU: every implementation forced
(packed:cpu, ref:any) against the float64 NumPy oracle (rnn_oracle.py) over
every mode, proj_size, bidirectional, stacked layers, batch_first, packed
variable lengths, unbatched input, initial states, dropout, each dtype, tile
edges (hidden sizes around the kernels' 4/8/16-unit panels, batches around
their row blocks), strided inputs and NaN; flatten_parameters (packing,
views' data pointers, the no-op, the warn-once repack path, aliasing);
state dicts (round trips, PyTorch's keys, a checked-in PyTorch state dict,
and PyTorch itself when importable); and bad input with PyTorch's texts."""

import pathlib
import warnings

import numpy as np
import pytest

import backplane
from backplane import backends, nn
from backplane.backends.cudnn import rnn as cudnn_rnn
from backplane.nn import _rnn_native as native
from backplane.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pack_sequence, pad_sequence
import rnn_oracle
from rnn_helpers import MODES, arr, make, rand, run_with, split_state, state64

try:  # at collection, before any test loads backplane_cuda (whose NCCL would clash with torch's)
    import torch
except ImportError:
    torch = None

DATA = pathlib.Path(__file__).resolve().parent / "data" / "rnn_torch.npz"
IMPLS = ["packed:cpu", "ref:any"]
TOL = {"float64": 1e-11, "float32": 2e-5, "float16": 5e-3, "bfloat16": 4e-2}


def run(m, x, hx=None, impl=None):
    return run_with(m, x, hx, impl)


# ---------------------------------------------------------------- against the oracle

CONFIGS = [  # (input, hidden, layers, bidirectional, proj, batch, steps)
    (3, 5, 1, False, 0, 2, 4),
    (4, 16, 2, True, 0, 7, 5),   # one full 16-unit panel; 7 rows: a 6-row block and a remainder
    (5, 17, 1, True, 0, 9, 3),   # a panel tail of 1 unit; 9 rows
    (2, 33, 3, False, 0, 1, 6),  # batch 1 (the matrix-vector path), 3 layers
    (6, 8, 2, False, 3, 4, 4),   # LSTM only: projection
    (7, 19, 2, True, 5, 1, 3),   # LSTM only: projection at batch 1 (W_hh and W_hr read row by row)
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "x".join(map(str, c)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_oracle(impl, mode, cfg, dtype):
    inp, hid, layers, bidir, proj, batch, steps = cfg
    if proj and mode != "LSTM":
        pytest.skip("proj_size is LSTM's")
    backplane.manual_seed(7)
    kw = {"proj_size": proj} if proj else {}
    m = make(mode, inp, hid, num_layers=layers, bidirectional=bidir, dtype=dtype, **kw)
    x = rand((steps, batch, inp), 1)
    out, state = run(m, backplane.asarray(x, dtype=dtype), impl=impl)
    h, c = split_state(mode, state)
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x.astype(dtype), layers, bidir)
    tol = TOL[dtype]
    np.testing.assert_allclose(arr(out), ref_out, atol=tol, rtol=tol)
    np.testing.assert_allclose(arr(h), ref_h, atol=tol, rtol=tol)
    if mode == "LSTM":
        np.testing.assert_allclose(arr(c), ref_c, atol=tol, rtol=tol)
    assert out.dtype == dtype and out.shape == ref_out.shape


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_initial_states_batch_first_and_no_bias(impl, mode):
    m = make(mode, 4, 9, num_layers=2, bidirectional=True, batch_first=True, bias=False, dtype="float64")
    assert not any(k.startswith("bias") for k in m.state_dict())
    x = rand((3, 6, 4), 2)  # [B, T, in]
    h0 = rand((4, 3, 9), 3, 0.5)
    c0 = rand((4, 3, 9), 4, 0.5)
    hx = (backplane.asarray(h0), backplane.asarray(c0)) if mode == "LSTM" else backplane.asarray(h0)
    out, state = run(m, backplane.asarray(x), hx, impl)
    h, c = split_state(mode, state)
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x.transpose(1, 0, 2), 2, True, h0, c0)
    np.testing.assert_allclose(arr(out), ref_out.transpose(1, 0, 2), atol=1e-12)
    np.testing.assert_allclose(arr(h), ref_h, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(arr(c), ref_c, atol=1e-12)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_RELU"])
def test_unbatched(impl, mode):
    m = make(mode, 3, 6, num_layers=2, bidirectional=True, dtype="float64")
    x = rand((5, 3), 5)
    h0 = rand((4, 6), 6, 0.3)
    hx = (backplane.asarray(h0), backplane.asarray(h0)) if mode == "LSTM" else backplane.asarray(h0)
    out, state = run(m, backplane.asarray(x), hx, impl)
    h, c = split_state(mode, state)
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x[:, None], 2, True, h0[:, None], h0[:, None])
    assert out.shape == (5, 12) and h.shape == (4, 6)
    np.testing.assert_allclose(arr(out), ref_out[:, 0], atol=1e-12)
    np.testing.assert_allclose(arr(h), ref_h[:, 0], atol=1e-12)
    if mode == "LSTM":
        assert c.shape == (4, 6)
        np.testing.assert_allclose(arr(c), ref_c[:, 0], atol=1e-12)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_variable_lengths(impl, mode, enforce_sorted):
    m = make(mode, 3, 7, num_layers=2, bidirectional=True, dtype="float64")
    lengths = [6, 4, 4, 1] if enforce_sorted else [2, 6, 1, 5]
    x = rand((6, 4, 3), 8)
    packed = pack_padded_sequence(backplane.asarray(x), lengths, enforce_sorted=enforce_sorted)
    out, state = run(m, packed, impl=impl)
    h, c = split_state(mode, state)
    assert isinstance(out, type(packed))
    padded, lens = pad_packed_sequence(out)
    assert list(np.asarray(lens)) == lengths
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x, 2, True, lengths=lengths)
    np.testing.assert_allclose(arr(padded), ref_out, atol=1e-12)
    np.testing.assert_allclose(arr(h), ref_h, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(arr(c), ref_c, atol=1e-12)


def test_packed_initial_state_follows_the_sort():
    m = nn.GRU(2, 3, dtype="float64")
    lengths = [1, 3, 2]
    x, h0 = rand((3, 3, 2), 9), rand((1, 3, 3), 10)
    out, h = m(pack_padded_sequence(backplane.asarray(x), lengths, enforce_sorted=False), backplane.asarray(h0))
    ref_out, ref_h, _ = rnn_oracle.run("GRU", state64(m), x, 1, False, h0, lengths=lengths)
    np.testing.assert_allclose(arr(pad_packed_sequence(out)[0]), ref_out, atol=1e-12)
    np.testing.assert_allclose(arr(h), ref_h, atol=1e-12)


def test_pack_helpers():
    seqs = [backplane.asarray(np.arange(n * 2, dtype=np.float32).reshape(n, 2)) for n in (3, 2, 1)]
    p = pack_sequence(seqs)
    assert list(np.asarray(p.batch_sizes)) == [3, 2, 1] and p.sorted_indices is None
    padded = pad_sequence(seqs, batch_first=True)
    assert padded.shape == (3, 3, 2) and np.asarray(padded)[2, 1:].sum() == 0
    back, lens = pad_packed_sequence(p, batch_first=True, total_length=4)
    assert back.shape == (3, 4, 2) and list(np.asarray(lens)) == [3, 2, 1]
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest"):
        pad_packed_sequence(p, total_length=2)


@pytest.mark.parametrize("impl", IMPLS)
def test_strided_input_and_nan(impl):
    m = nn.LSTM(3, 5, dtype="float64")
    base = rand((8, 2, 3), 11)
    x = backplane.asarray(base)[::2]  # a strided view
    assert not x.is_contiguous()
    out, _ = run(m, x, impl=impl)
    np.testing.assert_allclose(arr(out), rnn_oracle.run("LSTM", state64(m), base[::2], 1, False)[0], atol=1e-12)
    bad = base.copy()
    bad[2, 0, 1] = np.nan
    out, (h, c) = run(m, backplane.asarray(bad), impl=impl)
    o = arr(out)
    assert np.isfinite(o[:2]).all() and np.isnan(o[2:, 0]).all() and np.isfinite(o[:, 1]).all()
    assert np.isnan(arr(h)[0, 0]).all() and np.isfinite(arr(h)[0, 1]).all()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_RELU"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes(impl, mode, dtype):
    # packed:cpu computes them in float32, ref:any in float64: each rounds once, at the end.
    kw = {"proj_size": 3} if mode == "LSTM" else {}
    m = make(mode, 3, 6, num_layers=2, bidirectional=True, dtype=dtype, **kw)
    x = rand((4, 2, 3), 12, 0.5)
    xt = backplane.asarray(x).to(dtype)
    out, state = run(m, xt, impl=impl)
    ref_out, ref_h, _ = rnn_oracle.run(mode, state64(m), arr(xt), 2, True)
    assert out.dtype == dtype
    np.testing.assert_allclose(arr(out), ref_out, atol=TOL[dtype], rtol=TOL[dtype])
    h = state[0] if mode == "LSTM" else state
    assert h.dtype == dtype
    np.testing.assert_allclose(arr(h), ref_h, atol=TOL[dtype], rtol=TOL[dtype])
    table = str(backends.explain("rnn", xt, m._flat_buffer, mode=mode, input_size=3, hidden_size=6, num_layers=2,
                                 bidirectional=True, **kw))
    assert "packed:avx512_bf16    rejected       dtype" in table or "lacks the avx512_bf16" in table


# ---------------------------------------------------------------- dropout

def test_dropout_train_vs_eval_and_seed():
    m = nn.LSTM(3, 6, num_layers=3, dropout=0.5, dtype="float64")
    x = backplane.asarray(rand((5, 2, 3), 13))
    m.eval()
    out_eval = arr(m(x)[0])
    np.testing.assert_allclose(out_eval, rnn_oracle.run("LSTM", state64(m), arr(x), 3, False)[0], atol=1e-12)
    m.train()
    results = {}
    for impl in IMPLS:
        backplane.manual_seed(5)
        results[impl] = arr(run(m, x, impl=impl)[0])
    np.testing.assert_allclose(results["packed:cpu"], results["ref:any"], atol=1e-12)
    assert np.abs(results["ref:any"] - out_eval).max() > 1e-3  # dropout changed something
    backplane.manual_seed(5)
    np.testing.assert_array_equal(arr(m(x)[0]), results["packed:cpu"])  # reproducible from the seed
    assert np.abs(arr(m(x)[0]) - results["packed:cpu"]).max() > 0  # the stream moved on


@pytest.mark.parametrize("impl", IMPLS)
def test_dropout_one_zeroes_the_layer_below(impl):
    m = nn.GRU(3, 4, num_layers=2, dropout=1.0, dtype="float64").train()
    x = rand((4, 2, 3), 14)
    out, h = run(m, backplane.asarray(x), impl=impl)
    masks = [np.zeros((4, 2, 4))]
    ref_out, ref_h, _ = rnn_oracle.run("GRU", state64(m), x, 2, False, masks=masks)
    np.testing.assert_allclose(arr(out), ref_out, atol=1e-12)
    np.testing.assert_allclose(arr(h), ref_h, atol=1e-12)


def test_dropout_warning_with_one_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1, but got dropout=0.2 "
                                         "and num_layers=1"):
        nn.GRU(2, 3, dropout=0.2)


# ---------------------------------------------------------------- flatten_parameters

def test_parameters_are_views_of_one_buffer():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    names = [n for n, _ in m.named_parameters()]
    assert names == m._flat_weights_names
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]
    assert names[5] == "weight_ih_l0_reverse" and names[-1] == "weight_hr_l1_reverse"
    assert m.weight_ih_l1.shape == (20, 4) and m.weight_hh_l0.shape == (20, 2) and m.weight_hr_l0.shape == (2, 5)
    total, layout = cudnn_rnn.get_weight_layout("LSTM", 3, 5, 2, proj_size=2, bidirectional=True, device="cpu")
    buf = m._flat_buffer
    assert buf.shape == (total,) and list(layout) == names
    for name, (offset, shape) in layout.items():
        t = getattr(m, name)
        assert t.shape == shape and t.is_contiguous()
        assert t.data_ptr() == buf.data_ptr() + offset * 4, name
    assert [w.data_ptr() for w in m._flat_weights] == [getattr(m, n).data_ptr() for n in names]
    before = [w.data_ptr() for w in m._flat_weights]
    m.flatten_parameters()  # already packed: a no-op
    assert [w.data_ptr() for w in m._flat_weights] == before and m._flat_buffer is buf


def test_replaced_parameter_warns_once_and_still_works():
    m = nn.GRU(3, 4, num_layers=2, dtype="float64")
    x = backplane.asarray(rand((3, 2, 3), 15))
    new = backplane.asarray(rand((12, 4), 16))
    m.weight_hh_l1 = new
    assert m._flat_weights[m._flat_weights_names.index("weight_hh_l1")] is new
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out1 = arr(m(x)[0])
        out2 = arr(m(x)[0])
    msgs = [str(w.message) for w in caught]
    assert msgs == ["RNN module weights are not part of single contiguous chunk of memory. This means they need to "
                    "be compacted at every call, possibly greatly increasing memory usage. To compact weights again "
                    "call flatten_parameters()."]
    ref = rnn_oracle.run("GRU", state64(m), arr(x), 2, False)[0]
    np.testing.assert_allclose(out1, ref, atol=1e-12)
    np.testing.assert_array_equal(out1, out2)
    assert m.weight_hh_l1.data_ptr() == new.data_ptr()  # the user's tensor is still the parameter
    m.flatten_parameters()
    assert m._is_packed() and m.weight_hh_l1.data_ptr() != new.data_ptr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(arr(m(x)[0]), out1)
    other = nn.GRU(3, 4, num_layers=2, dtype="float64")  # the warning is per module
    other.bias_ih_l0 = backplane.asarray(np.zeros(12))
    with pytest.warns(UserWarning, match="not part of single contiguous chunk"):
        other(x)


def test_aliased_weights_are_not_packed():
    m = nn.RNN(4, 4, num_layers=1, bias=False, dtype="float64")
    shared = backplane.asarray(rand((4, 4), 17))
    m.weight_ih_l0 = shared
    m.weight_hh_l0 = shared
    m.flatten_parameters()  # two weights share memory: kept as they are (PyTorch's rule)
    assert m.weight_ih_l0.data_ptr() == m.weight_hh_l0.data_ptr() == shared.data_ptr()
    with pytest.warns(UserWarning):
        out = arr(m(backplane.asarray(rand((2, 1, 4), 18)))[0])
    assert out.shape == (2, 1, 4)


def test_to_dtype_repacks():
    m = nn.LSTM(3, 4)
    old = m._flat_buffer.data_ptr()
    m.double()
    assert m._flat_buffer.dtype == "float64" and m._flat_buffer.data_ptr() != old and m._is_packed()
    assert all(w.dtype == "float64" for w in m.parameters())
    out, _ = m(backplane.asarray(rand((2, 1, 3), 19)))
    assert out.dtype == "float64"


# ---------------------------------------------------------------- state dicts

def test_state_dict_round_trip():
    a = nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=2, batch_first=True)
    sd = a.state_dict()
    assert list(sd) == a._flat_weights_names and all(isinstance(v, np.ndarray) for v in sd.values())
    b = nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=2, batch_first=True)
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b._is_packed()
    x = backplane.asarray(rand((2, 4, 3), 20).astype(np.float32))
    np.testing.assert_array_equal(arr(a(x)[0]), arr(b(x)[0]))
    sd2 = {k: backplane.asarray(v) for k, v in sd.items()}  # Tensors load too, copied into b's buffer
    b.load_state_dict(sd2)
    assert b.weight_ih_l0.data_ptr() != sd2["weight_ih_l0"].data_ptr()


def test_load_state_dict_errors():
    m = nn.GRU(3, 4)
    sd = m.state_dict()
    bad = dict(sd)
    del bad["bias_hh_l0"]
    bad["extra"] = np.zeros(1)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(bad)
    text = str(e.value)
    assert text.startswith("Error(s) in loading state_dict for GRU:")
    assert 'Unexpected key(s) in state_dict: "extra".' in text and 'Missing key(s) in state_dict: "bias_hh_l0".' in text
    result = m.load_state_dict(bad, strict=False)
    assert result.missing_keys == ["bias_hh_l0"] and result.unexpected_keys == ["extra"]
    wrong = dict(sd, weight_ih_l0=np.zeros((12, 5), np.float32))
    with pytest.raises(RuntimeError, match=r"size mismatch for weight_ih_l0: copying a param with shape \[12, 5\] "
                                           r"from checkpoint, the shape in current model is \[12, 3\]"):
        m.load_state_dict(wrong)


def test_checked_in_pytorch_state_dicts():
    d = np.load(DATA)
    lstm = nn.LSTM(3, 6, num_layers=2, bidirectional=True, batch_first=True, proj_size=4)
    lstm.load_state_dict({k[5:]: d[k] for k in d.files if k.startswith("lstm.")})
    out, (h, c) = lstm(backplane.asarray(d["lstm_input"]))
    np.testing.assert_allclose(np.asarray(out), d["lstm_output"], atol=2e-6)
    np.testing.assert_allclose(np.asarray(h), d["lstm_h_n"], atol=2e-6)
    np.testing.assert_allclose(np.asarray(c), d["lstm_c_n"], atol=2e-6)
    gru = nn.GRU(3, 5)
    gru.load_state_dict({k[4:]: d[k] for k in d.files if k.startswith("gru.")})
    packed = pack_padded_sequence(backplane.asarray(d["gru_input"]), list(d["gru_lengths"]), enforce_sorted=False)
    out, h = gru(packed)
    np.testing.assert_allclose(np.asarray(pad_packed_sequence(out)[0]), d["gru_output_padded"], atol=2e-6)
    np.testing.assert_allclose(np.asarray(h), d["gru_h_n"], atol=2e-6)


@pytest.mark.parametrize("mode", list(MODES))
def test_against_pytorch(mode):
    if torch is None:
        pytest.skip("torch is not importable")
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}.get(mode, torch.nn.RNN)
    kw = dict(MODES[mode][1])
    if mode == "LSTM":
        kw["proj_size"] = 3
    torch.manual_seed(0)
    t = cls(4, 7, num_layers=2, bidirectional=True, batch_first=True, **kw).double()
    b = make(mode, 4, 7, num_layers=2, bidirectional=True, batch_first=True, dtype="float64",
             **({"proj_size": 3} if mode == "LSTM" else {}))
    b.load_state_dict(t.state_dict())  # PyTorch tensors through DLPack
    x = torch.randn(3, 5, 4, dtype=torch.float64)
    with torch.no_grad():
        ty, ts = t(x)
    for impl in IMPLS:
        by, bs = run(b, backplane.asarray(x.numpy()), impl=impl)
        np.testing.assert_allclose(arr(by), ty.numpy(), atol=1e-12)
        tsh = ts[0] if mode == "LSTM" else ts
        bsh = bs[0] if mode == "LSTM" else bs
        np.testing.assert_allclose(arr(bsh), tsh.numpy(), atol=1e-12)


# ---------------------------------------------------------------- bad input

def test_constructor_errors_as_pytorch():
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'."):
        nn.RNN(2, 3, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
        nn.GRU(2, 3, proj_size=1)
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(2, 3, proj_size=3)
    with pytest.raises(ValueError, match="proj_size should be a positive integer or zero to disable projections"):
        nn.LSTM(2, 3, proj_size=-1)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(2, 3, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.GRU(2, 0)
    with pytest.raises(TypeError, match="input_size should be of type int, got: float"):
        nn.GRU(2.0, 3)
    with pytest.raises(TypeError, match="bias should be of type bool, got: int"):
        nn.GRU(2, 3, bias=1)
    with pytest.raises(ValueError, match="Unrecognized RNN mode: BAD"):
        nn.RNNBase("BAD", 2, 3)
    with pytest.raises(ValueError, match="Unknown mode: BAD"):
        cudnn_rnn.get_cudnn_mode("BAD")
    assert [cudnn_rnn.get_cudnn_mode(m) for m in ("RNN_RELU", "RNN_TANH", "LSTM", "GRU")] == [0, 1, 2, 3]


def test_forward_errors_as_pytorch():
    lstm, gru = nn.LSTM(3, 4, num_layers=2), nn.GRU(3, 4)
    x = backplane.asarray(np.zeros((5, 2, 3), np.float32))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 2"):
        gru(backplane.asarray(np.zeros((5, 2, 2), np.float32)))
    with pytest.raises(ValueError, match="GRU: Expected input to be 2D or 3D, got 4D instead"):
        gru(backplane.asarray(np.zeros((1, 5, 2, 3), np.float32)))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 1D tensor instead"):
        nn.RNN(3, 4)(backplane.asarray(np.zeros(3, np.float32)))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        gru(x, backplane.asarray(np.zeros((1, 3, 4), np.float32)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got 2-D tensor"):
        gru(x, backplane.asarray(np.zeros((1, 4), np.float32)))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"):
        gru(backplane.asarray(np.zeros((5, 3), np.float32)), backplane.asarray(np.zeros((1, 1, 4), np.float32)))
    h, c = np.zeros((2, 2, 4), np.float32), np.zeros((2, 2, 4), np.float32)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(2, 2, 4\), got \[2, 2, 5\]"):
        lstm(x, (backplane.asarray(h), backplane.asarray(np.zeros((2, 2, 5), np.float32))))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(2, 2, 4\), got \[1, 2, 4\]"):
        lstm(x, (backplane.asarray(h[:1]), backplane.asarray(c)))
    with pytest.raises(RuntimeError, match=r"For batched 3-D input, hx and cx should also be 3-D but got \(3-D, 2-D\)"):
        lstm(x, (backplane.asarray(h), backplane.asarray(c[0])))
    with pytest.raises(ValueError, match=r"RNN input dtype \(float64\) does not match weight dtype \(float32\)"):
        gru(backplane.asarray(np.zeros((5, 2, 3))))
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order when `enforce_sorted`"):
        pack_padded_sequence(x, [1, 5])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        pack_padded_sequence(x, [5, 0])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 3 "
                                           r"\(batch_size=2\)"):
        pack_padded_sequence(x, [5, 4, 3])


def test_empty_sequences_and_batches():
    gru = nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        gru(backplane.asarray(np.zeros((0, 2, 3), np.float32)))
    out, h = gru(backplane.asarray(np.zeros((5, 0, 3), np.float32)))
    assert out.shape == (5, 0, 4) and h.shape == (1, 0, 4)


def test_replaced_parameter_of_a_wrong_shape():
    gru = nn.GRU(3, 4)
    gru.weight_hh_l0 = backplane.asarray(np.zeros((12, 5), np.float32))
    with pytest.warns(UserWarning), pytest.raises(ValueError, match=r"rnn_pack_weights: expected weight_hh_l0 of "
                                                                    r"shape \[12, 4\], got weight_hh_l0 of shape "
                                                                    r"\[12, 5\]"):
        gru(backplane.asarray(np.zeros((5, 2, 3), np.float32)))


def test_native_op_errors():
    buf = native.pack_weights(*nn.GRU(3, 4)._flat_weights, mode="GRU", input_size=3, hidden_size=4)[0]
    x = backplane.asarray(np.zeros((2, 1, 3), np.float32))
    cfg = dict(mode="GRU", input_size=3, hidden_size=4)
    out = native.rnn(x, buf, **cfg)
    assert len(out) == 2
    with pytest.raises(ValueError, match="rnn: expected a contiguous 1-D buffer of 128 elements"):
        native.rnn(x, buf[:100], **cfg)
    with pytest.raises(ValueError, match="expected one of"):
        native.rnn(x, buf, mode="LSTM2", input_size=3, hidden_size=4)
    with pytest.raises(ValueError, match="lengths in \\[1, 2\\]"):
        native.rnn(x, buf, lengths=(3,), **cfg)
    with pytest.raises(ValueError, match="proj_size only with LSTM"):
        native.rnn(x, buf, proj_size=2, **cfg)
    with pytest.raises(ValueError, match="cx only with mode LSTM"):
        native.rnn(x, buf, None, backplane.asarray(np.zeros((1, 1, 4), np.float32)), **cfg)
    with pytest.raises(ValueError, match="dropout=1.5"):
        native.rnn(x, buf, dropout=1.5, **cfg)
    with pytest.raises(ValueError, match="rnn_pack_weights: expected 4 weights"):
        native.pack_weights(buf, **cfg)


def test_cudnn_helpers_without_a_gpu():
    t = backplane.asarray(np.zeros(3, np.float32))
    assert backends.cudnn.is_acceptable(t) is False  # a CPU tensor
    if not backplane.cuda.is_available():
        with pytest.raises(RuntimeError, match="cuDNN's RNN weight layout"):
            cudnn_rnn.get_weight_layout("LSTM", 3, 4, device="cuda")
    holder = cudnn_rnn.Unserializable(5)
    assert holder.get() == 5
    table = str(backends.explain("rnn", backplane.asarray(np.zeros((2, 1, 3), np.float32)),
                                 nn.GRU(3, 4)._flat_buffer, mode="GRU", input_size=3, hidden_size=4))
    assert "cudnn:rnn" in table and "packed:cpu" in table and "ref:any" in table


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_two_threads_split_the_units(mode):
    # B * hidden >= 4096: packed:cpu splits the blocks of units over the team (one barrier per step).
    kw = {"proj_size": 40} if mode == "LSTM" else {}
    m = make(mode, 5, 130, bidirectional=True, dtype="float64", **kw)
    x = rand((3, 33, 5), 21)
    lengths = [3] * 20 + [2] * 7 + [1] * 6
    before = backplane.get_num_threads()
    backplane.set_num_threads(min(2, backplane.max_num_threads()))
    try:
        out, state = run(m, pack_padded_sequence(backplane.asarray(x), lengths), impl="packed:cpu")
    finally:
        backplane.set_num_threads(before)
    h, _ = split_state(mode, state)
    ref_out, ref_h, _ = rnn_oracle.run(mode, state64(m), x, 1, True, lengths=lengths)
    np.testing.assert_allclose(arr(pad_packed_sequence(out)[0]), ref_out, atol=1e-12)
    np.testing.assert_allclose(arr(h), ref_h, atol=1e-12)


def test_long_sequences_project_in_chunks():
    # 64 x 4 x 260 float64 projections per step: packed:cpu projects 31 steps at a time (16 MiB), so this
    # sequence of 65 runs in chunks of 31, 31 and 3, forward and reverse, with sequences ending in each.
    m = nn.LSTM(4, 260, bidirectional=True, dtype="float64")
    x = rand((65, 64, 4), 22, 0.5)
    lengths = [65] * 22 + [40] * 21 + [7] * 21
    before = backplane.get_num_threads()
    backplane.set_num_threads(min(2, backplane.max_num_threads()))
    try:
        out, (h, c) = run(m, pack_padded_sequence(backplane.asarray(x), lengths), impl="packed:cpu")
    finally:
        backplane.set_num_threads(before)
    ref_out, ref_h, ref_c = rnn_oracle.run("LSTM", state64(m), x, 1, True, lengths=lengths)
    np.testing.assert_allclose(arr(pad_packed_sequence(out)[0]), ref_out, atol=1e-12)
    np.testing.assert_allclose(arr(h), ref_h, atol=1e-12)
    np.testing.assert_allclose(arr(c), ref_c, atol=1e-12)


# ---------------------------------------------------------------- the bf16 permission

def _bf16_row_available():
    """The bf16 row can run here: built, on a CPU with AVX512_BF16, and not capped below AVX-512 by
    BACKPLANE_CPU_CAPABILITY / ATEN_CPU_CAPABILITY (its rejection then names `capability`)."""
    x = backplane.asarray(np.zeros((1, 1, 2), np.float32))
    table = backends.explain("rnn", x, nn.GRU(2, 2)._flat_buffer, mode="GRU", input_size=2, hidden_size=2)
    rows = [line for line in str(table).splitlines() if "packed:avx512_bf16" in line]
    return bool(rows) and not any("lacks the avx512_bf16" in r or "capability:" in r for r in rows)


def _run_bf16_row(m, x):
    """The module on packed:avx512_bf16 under the bf16 permission (mkldnn.rnn.fp32_precision), restored after."""
    before = backends.mkldnn.rnn.fp32_precision
    backends.mkldnn.rnn.fp32_precision = "bf16"
    try:
        return run(m, backplane.asarray(x), impl="packed:avx512_bf16")
    finally:
        backends.mkldnn.rnn.fp32_precision = before


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch", [1, 7])
def test_bf16_permission_row(mode, batch):
    if not _bf16_row_available():
        pytest.skip("this CPU lacks AVX512_BF16")
    kw = {"proj_size": 6} if mode == "LSTM" else {}
    m = make(mode, 5, 37, num_layers=2, bidirectional=True, **kw)
    x = rand((6, batch, 5), 23, 0.5).astype(np.float32)
    lengths = [6] + [4] * (batch - 1)
    table = str(backends.explain("rnn", backplane.asarray(x), m._flat_buffer, mode=mode, input_size=5, hidden_size=37,
                                 num_layers=2, bidirectional=True, **kw))
    assert "packed:avx512_bf16    rejected       precision" in table  # not without the permission
    backends.mkldnn.rnn.fp32_precision = "bf16"
    out, state = run(m, pack_padded_sequence(backplane.asarray(x), lengths), impl="packed:avx512_bf16")
    ref_out, ref_h, _ = rnn_oracle.run(mode, state64(m), x, 2, True, lengths=lengths)
    err = np.abs(arr(pad_packed_sequence(out)[0]) - ref_out).max()
    assert 1e-7 < err < 2e-2, err  # bf16 products (not fp32's 1e-7), fp32 state
    h = state[0] if mode == "LSTM" else state
    np.testing.assert_allclose(arr(h), ref_h, atol=2e-2)
    f64 = m.double()
    table = str(backends.explain("rnn", backplane.asarray(x.astype(np.float64)), f64._flat_buffer, mode=mode,
                                 input_size=5, hidden_size=37, num_layers=2, bidirectional=True, **kw))
    assert "packed:avx512_bf16    rejected       dtype" in table


# Hidden sizes whose gates * hidden * itemsize is a multiple of 1 KiB: packed:cpu pads the rows of the
# input projection by a cache line there (batch > 1); batch 1 streams the packed panels (16 x 16 transposes
# of W, K = hidden not a multiple of 16 in the odd ones).
PADDED = {"LSTM": 64, "GRU": 256, "RNN_TANH": 256, "RNN_RELU": 256}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch", [1, 5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("odd", [False, True])
def test_padded_projection_and_panels_against_the_oracle(mode, batch, dtype, odd):
    hidden = PADDED[mode] + (7 if odd else 0)
    m = make(mode, 6, hidden, num_layers=2, dtype=dtype)
    x = rand((4, batch, 6), 31, 0.5)
    out, state = run(m, backplane.asarray(x, dtype=dtype), impl="packed:cpu")
    h, c = split_state(mode, state)
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x.astype(dtype), 2, False)
    tol = TOL[dtype]
    np.testing.assert_allclose(arr(out), ref_out, atol=tol, rtol=tol)
    np.testing.assert_allclose(arr(h), ref_h, atol=tol, rtol=tol)
    if mode == "LSTM":
        np.testing.assert_allclose(arr(c), ref_c, atol=tol, rtol=tol)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("hidden", [17, 64, 100])
@pytest.mark.parametrize("batch", [1, 9])
def test_bf16_row_against_the_oracle(mode, hidden, batch):
    # bf16 products (the recurrent panels and the input projections on the AVX512_BF16 GEMM), fp32 state:
    # within bf16's rounding of the oracle, and measurably not fp32's result.
    if not _bf16_row_available():
        pytest.skip("this CPU lacks AVX512_BF16")
    m = make(mode, 7, hidden, num_layers=2)
    x = rand((5, batch, 7), 32, 0.5).astype(np.float32)
    out, state = _run_bf16_row(m, x)
    h, c = split_state(mode, state)
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x, 2, False)
    err = np.abs(arr(out) - ref_out).max()
    assert 1e-6 < err < 3e-2, err
    np.testing.assert_allclose(arr(h), ref_h, atol=3e-2)
    if mode == "LSTM":
        np.testing.assert_allclose(arr(c), ref_c, atol=3e-2)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_bf16_row_propagates_nan(mode):
    if not _bf16_row_available():
        pytest.skip("this CPU lacks AVX512_BF16")
    m = make(mode, 3, 40)
    x = rand((5, 3, 3), 33).astype(np.float32)
    x[2, 1, 0] = np.nan  # entry 1 turns NaN from step 2 on; the others stay finite
    out, _ = _run_bf16_row(m, x)
    o = arr(out)
    assert np.isnan(o[2:, 1]).all() and np.isfinite(o[:2]).all() and np.isfinite(o[:, [0, 2]]).all()


def test_explain_takes_the_module_and_its_input():
    # explain("rnn", module, input) judges the op call forward would make, as for the attention modules.
    m = nn.LSTM(5, 7, num_layers=2, batch_first=True)
    x = np.random.default_rng(4).standard_normal((3, 6, 5)).astype(np.float32)
    by_module = backends.explain("rnn", m, x)
    by_args = backends.explain("rnn", backplane.asarray(x), m._flat_buffer, mode="LSTM", input_size=5, hidden_size=7,
                               num_layers=2, batch_first=True)
    assert by_module.chosen == by_args.chosen and by_module.problem == by_args.problem
    assert "steps=6 batch=3" in by_module.problem   # batch_first came from the module
    packed = nn.utils.rnn.pack_padded_sequence(x, [6, 4, 2], batch_first=True)
    assert backends.explain("rnn", m, packed).chosen == by_module.chosen
    with pytest.raises(TypeError, match="runs op 'rnn'"):
        backends.explain("sdpa", m, x)
    with pytest.raises(ValueError, match="does not match weight dtype"):
        backends.explain("rnn", m, x.astype(np.float64))


# The recurrent sums start from the input projection (Note [Input projection first] in cell_kernel.h):
# every gate gets it exactly once (GRU's n gate outside r * (...)), with initial states so that both
# parts count, inputs large enough to dominate, hidden sizes that end in a partial 16-unit block, batch 1
# (the matrix-vector path; f64 there reads W row by row) and a batch of several row blocks, and a NaN in
# one entry's input that must reach every later output of that entry and nothing else.
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("batch", [1, 7])
@pytest.mark.parametrize("hidden", [17, 33])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_input_projection_first_against_the_oracle(mode, batch, hidden, dtype):
    layers, steps, inp = 2, 5, 6
    m = make(mode, inp, hidden, num_layers=layers, bidirectional=True, dtype=dtype)
    x = rand((steps, batch, inp), 41, 3.0).astype(dtype)
    h0 = rand((2 * layers, batch, hidden), 42, 0.5).astype(dtype)
    c0 = rand((2 * layers, batch, hidden), 43, 0.5).astype(dtype)
    hx = ((backplane.asarray(h0), backplane.asarray(c0)) if mode == "LSTM" else backplane.asarray(h0))
    tol = TOL[dtype]
    for poisoned in (False, True):
        xs = x.copy()
        if poisoned:
            xs[2, batch - 1, 1] = np.nan
        out, state = run(m, backplane.asarray(xs), hx, impl="packed:cpu")
        h, c = split_state(mode, state)
        ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), xs, layers, True, h0, c0)
        np.testing.assert_allclose(arr(out), ref_out, atol=tol, rtol=tol)
        np.testing.assert_allclose(arr(h), ref_h, atol=tol, rtol=tol)
        if mode == "LSTM":
            np.testing.assert_allclose(arr(c), ref_c, atol=tol, rtol=tol)
        o = arr(out)
        if poisoned:  # the forward direction from step 2 on, the reverse one up to it (and layer 2 everywhere)
            assert np.isnan(o[:, batch - 1]).any(axis=-1).all()
            assert np.isfinite(o[:, :batch - 1]).all()
        else:
            assert np.isfinite(o).all()


# A row block's recurrent product runs k in ranges of the kernel's panel slice (128 KiB on AVX-512: k up to
# 512 for LSTM, 682 for GRU, 2048 for RNN), keeping partial sums between them (cell_kernel.h, rows_of):
# hidden sizes just past each, with several row blocks (batch 7 and 9), against the oracle.
@pytest.mark.parametrize("mode,hidden,batch", [("LSTM", 530, 7), ("GRU", 700, 9), ("RNN_TANH", 2050, 9)])
def test_recurrent_product_over_several_k_ranges_against_the_oracle(mode, hidden, batch):
    steps, inp = 3, 4
    m = make(mode, inp, hidden, num_layers=1, dtype="float32")
    x = rand((steps, batch, inp), 51, 1.0).astype("float32")
    h0 = rand((1, batch, hidden), 52, 0.5).astype("float32")
    c0 = rand((1, batch, hidden), 53, 0.5).astype("float32")
    hx = ((backplane.asarray(h0), backplane.asarray(c0)) if mode == "LSTM" else backplane.asarray(h0))
    out, state = run(m, backplane.asarray(x), hx, impl="packed:cpu")
    h, c = split_state(mode, state)
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x, 1, False, h0, c0)
    np.testing.assert_allclose(arr(out), ref_out, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(arr(h), ref_h, atol=1e-4, rtol=1e-4)
    if mode == "LSTM":
        np.testing.assert_allclose(arr(c), ref_c, atol=1e-4, rtol=1e-4)
