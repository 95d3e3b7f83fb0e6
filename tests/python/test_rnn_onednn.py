"""onednn:rnn (src/ops/rnn/rnn_onednn.cpp), forced, against the float64 NumPy
oracle (rnn_oracle.py): every mode (LBR GRU's gate order and fourth bias),
proj_size, bidirectional stacks (one primitive per layer), unidirectional
stacks as one primitive (input_size == out size) or two (layer 0 apart),
batch_first, initial states, no bias, unbatched, odd sizes, strided input,
NaN, dropout between layers, two threads, weights rewritten in place between
calls, bf16; and the configurations it declines, with the reasons explain
shows (mkldnn.enabled, mkldnn.deterministic, f64 / f16, packed variable
lengths, bf16 with proj_size)."""

import numpy as np
import pytest

import backplane
from backplane import _C, backends, nn
from backplane.nn.utils.rnn import pack_padded_sequence
from conftest import onednn_has_bf16
import rnn_oracle
from rnn_helpers import MODES, arr, make, rand, run_with, split_state, state64

IMPL = "onednn:rnn"
TOL = {"float32": 2e-5, "bfloat16": 4e-2}

pytestmark = pytest.mark.skipif(
    not next(i.available for i in backends.list_implementations("rnn") if i.name == IMPL),
    reason="built without oneDNN")


def run(m, x, hx=None, impl=IMPL):
    return run_with(m, x, hx, impl)


def check(mode, out, state, ref, tol):
    ref_out, ref_h, ref_c = ref
    h, c = split_state(mode, state)
    np.testing.assert_allclose(arr(out), ref_out, atol=tol, rtol=tol)
    np.testing.assert_allclose(arr(h), ref_h, atol=tol, rtol=tol)
    if mode == "LSTM":
        np.testing.assert_allclose(arr(c), ref_c, atol=tol, rtol=tol)


def reasons(m, x):
    return backends.explain("rnn", m, x).row(IMPL).reasons


# ---------------------------------------------------------------- against the oracle

CONFIGS = [  # (input, hidden, layers, bidirectional, proj, batch, steps)
    (3, 5, 1, False, 0, 2, 4),
    (4, 16, 2, True, 0, 7, 5),   # bidirectional stack: a primitive per layer
    (5, 17, 1, True, 0, 9, 3),   # odd sizes
    (2, 33, 3, False, 0, 1, 6),  # batch 1; layer 0 alone, layers 1-2 one primitive
    (6, 6, 3, False, 0, 3, 4),   # input == hidden: the whole stack one primitive
    (6, 8, 2, False, 3, 4, 4),   # LSTM only: projection
    (7, 19, 2, True, 5, 1, 3),   # LSTM only: projection, bidirectional, batch 1
    (3, 8, 3, False, 3, 2, 5),   # LSTM only: input == proj_size: one primitive with projection
]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "x".join(map(str, c)))
def test_matches_oracle(mode, cfg):
    inp, hid, layers, bidir, proj, batch, steps = cfg
    if proj and mode != "LSTM":
        pytest.skip("proj_size is LSTM's")
    backplane.manual_seed(7)
    kw = {"proj_size": proj} if proj else {}
    m = make(mode, inp, hid, num_layers=layers, bidirectional=bidir, **kw)
    x = rand((steps, batch, inp), 1).astype(np.float32)
    out, state = run(m, backplane.asarray(x))
    assert out.dtype == "float32" and out.shape == (steps, batch, (2 if bidir else 1) * (proj or hid))
    check(mode, out, state, rnn_oracle.run(mode, state64(m), x, layers, bidir), TOL["float32"])


@pytest.mark.parametrize("mode", list(MODES))
def test_initial_states_batch_first_and_no_bias(mode):
    # Large random biases and states: a gate or bias in the wrong place would show (GRU's u / r swap, b_hn).
    m = make(mode, 4, 9, num_layers=2, bidirectional=True, batch_first=True, bias=mode != "RNN_RELU")
    sd = {k: rand(v.shape, 20 + i, 0.6).astype(np.float32) for i, (k, v) in enumerate(m.state_dict().items())}
    m.load_state_dict(sd)
    x = rand((3, 6, 4), 2).astype(np.float32)  # [B, T, in]
    h0 = rand((4, 3, 9), 3, 0.5).astype(np.float32)
    c0 = rand((4, 3, 9), 4, 0.5).astype(np.float32)
    hx = (backplane.asarray(h0), backplane.asarray(c0)) if mode == "LSTM" else backplane.asarray(h0)
    out, state = run(m, backplane.asarray(x), hx)
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x.transpose(1, 0, 2), 2, True, h0, c0)
    check(mode, out, state, (ref_out.transpose(1, 0, 2), ref_h, ref_c), 5e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_unbatched(mode):
    m = make(mode, 3, 6, num_layers=2)
    x = rand((5, 3), 5).astype(np.float32)
    out, state = run(m, backplane.asarray(x))
    ref_out, ref_h, ref_c = rnn_oracle.run(mode, state64(m), x[:, None], 2, False)
    check(mode, out, state, (ref_out[:, 0], ref_h[:, 0], None if ref_c is None else ref_c[:, 0]), TOL["float32"])


def test_strided_input_and_nan():
    m = nn.LSTM(3, 5, num_layers=2)
    base = rand((8, 2, 3), 11).astype(np.float32)
    x = backplane.asarray(base)[::2]  # a strided view
    assert not x.is_contiguous()
    out, state = run(m, x)
    check("LSTM", out, state, rnn_oracle.run("LSTM", state64(m), base[::2], 2, False), TOL["float32"])
    bf = nn.GRU(3, 5, batch_first=True)
    xt = backplane.asarray(base.transpose(1, 0, 2))  # [B, T, in] as a transposed view
    assert not xt.is_contiguous()
    out, h = run(bf, xt)
    ref_out, ref_h, _ = rnn_oracle.run("GRU", state64(bf), base, 1, False)
    np.testing.assert_allclose(arr(out), ref_out.transpose(1, 0, 2), atol=2e-5)
    bad = base.copy()
    bad[2, 0, 1] = np.nan
    out, (h, c) = run(m, backplane.asarray(bad))
    o = arr(out)
    assert np.isfinite(o[:2]).all() and np.isnan(o[2:, 0]).all() and np.isfinite(o[:, 1]).all()


@pytest.mark.parametrize("mode,inp,layers,bidir,proj", [
    ("LSTM", 4, 2, False, 0),
    ("LSTM", 3, 2, True, 3),      # W_hr read from the buffer too; directions apart
    ("RNN_TANH", 6, 3, False, 0),  # one primitive for the stack: layers apart
    ("GRU", 4, 2, True, 0),       # staged
])
def test_weights_rewritten_in_place_are_read_again(mode, inp, layers, bidir, proj):
    # Parameters written through their views of the packed buffer: same address, new values, new results
    # (so nothing may be cached by the buffer's address; LSTM's and RNN's reorders read the buffer itself).
    m = make(mode, inp, 6, num_layers=layers, bidirectional=bidir, **({"proj_size": proj} if proj else {}))
    x = rand((3, 2, inp), 15).astype(np.float32)
    first, _ = run(m, backplane.asarray(x))
    buffer_address = m._flat_buffer.data_ptr()
    for i, name in enumerate(m._flat_weights_names):
        view = np.from_dlpack(getattr(m, name))
        view[...] = rand(view.shape, 30 + i, 0.4)
    assert m._flat_buffer.data_ptr() == buffer_address and m._is_packed()
    out, state = run(m, backplane.asarray(x))
    assert np.abs(arr(out) - arr(first)).max() > 1e-3
    check(mode, out, state, rnn_oracle.run(mode, state64(m), x, layers, bidir), TOL["float32"])


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("layers,bidir", [(3, False), (2, True)])
def test_same_shapes_with_and_without_bias(mode, layers, bidir):
    # Without biases a direction's parameters are closer together in the buffer: the strides the reorders
    # read it with differ, so the two modules, same shapes otherwise, must not share them.
    x = rand((4, 3, 8), 40).astype(np.float32)
    modules = [make(mode, 8, 8, num_layers=layers, bidirectional=bidir, bias=b) for b in (True, False, True)]
    for m in modules:
        out, state = run(m, backplane.asarray(x))
        check(mode, out, state, rnn_oracle.run(mode, state64(m), x, layers, bidir), TOL["float32"])


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("steps,batch", [(1, 32), (5, 20)])
def test_one_step_and_larger_batches(mode, steps, batch):
    # Where oneDNN picks other weight formats: its packed GEMM format (here GRU's W_ih at one step, W_hh at
    # larger batches), which it reorders into only from dense (staged) weights.
    m = make(mode, 5, 12, num_layers=2)
    x = rand((steps, batch, 5), 41).astype(np.float32)
    out, state = run(m, backplane.asarray(x))
    check(mode, out, state, rnn_oracle.run(mode, state64(m), x, 2, False), TOL["float32"])


def test_two_threads_match_one():
    # Primitives are cached per team size: the two-thread one is a different primitive, with the same results.
    m = nn.GRU(16, 64, num_layers=2, bidirectional=True)
    x = rand((6, 8, 16), 16).astype(np.float32)
    before = backplane.get_num_threads()
    outs = []
    try:
        for n in (1, 2, 1):
            backplane.set_num_threads(n)
            outs.append(arr(run(m, backplane.asarray(x))[0]))
    finally:
        backplane.set_num_threads(before)
    ref = rnn_oracle.run("GRU", state64(m), x, 2, True)[0]
    for o in outs:
        np.testing.assert_allclose(o, ref, atol=TOL["float32"], rtol=TOL["float32"])
    np.testing.assert_array_equal(outs[0], outs[2])


# ---------------------------------------------------------------- dropout (a primitive per layer, the mask between)

def test_dropout_draws_the_same_mask_as_packed_cpu():
    m = nn.LSTM(3, 6, num_layers=3, dropout=0.5).train()
    x = backplane.asarray(rand((5, 2, 3), 13).astype(np.float32))
    results = {}
    for impl in ("packed:cpu", IMPL):
        backplane.manual_seed(5)
        results[impl] = arr(run(m, x, impl=impl)[0])
    np.testing.assert_allclose(results[IMPL], results["packed:cpu"], atol=1e-5)
    m.eval()
    assert np.abs(results[IMPL] - arr(run(m, x)[0])).max() > 1e-3  # dropout changed something


def test_dropout_one_zeroes_the_layer_below():
    m = nn.GRU(3, 4, num_layers=2, dropout=1.0).train()
    x = rand((4, 2, 3), 14).astype(np.float32)
    out, h = run(m, backplane.asarray(x))
    ref_out, ref_h, _ = rnn_oracle.run("GRU", state64(m), x, 2, False, masks=[np.zeros((4, 2, 4))])
    np.testing.assert_allclose(arr(out), ref_out, atol=TOL["float32"])
    np.testing.assert_allclose(arr(h), ref_h, atol=TOL["float32"])


# ---------------------------------------------------------------- bf16

@pytest.mark.skipif(not onednn_has_bf16(), reason="this CPU's oneDNN has no bf16")
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("layers,bidir", [(1, False), (2, True), (3, False)])
def test_bf16_against_the_oracle(mode, layers, bidir):
    m = make(mode, 5, 17, num_layers=layers, bidirectional=bidir, dtype="bfloat16")
    xt = backplane.asarray(rand((4, 3, 5), 17, 0.5)).to("bfloat16")
    h0 = backplane.asarray(rand((layers * (2 if bidir else 1), 3, 17), 18, 0.5)).to("bfloat16")
    c0 = backplane.asarray(rand((layers * (2 if bidir else 1), 3, 17), 19, 0.5)).to("bfloat16")
    out, state = run(m, xt, (h0, c0) if mode == "LSTM" else h0)
    assert out.dtype == "bfloat16" and split_state(mode, state)[0].dtype == "bfloat16"
    ref = rnn_oracle.run(mode, state64(m), arr(xt), layers, bidir, arr(h0), arr(c0))
    check(mode, out, state, ref, TOL["bfloat16"])


# ---------------------------------------------------------------- where it stands and what it declines

def test_list_place_and_default_choice():
    names = [i.name for i in backends.list_implementations("rnn")]
    assert names.index("packed:cpu") < names.index(IMPL) == names.index("ref:any") - 1
    m = nn.LSTM(3, 4)
    assert backends.explain("rnn", m, rand((2, 1, 3), 0).astype(np.float32)).chosen == "packed:cpu"


def test_default_choice_for_bf16_is_onednn():
    # bf16: oneDNN's bf16 GEMMs beat packed:cpu's widening (Note [RNN default order]);
    # where it declines, packed:cpu, the list's next, runs.
    m = nn.LSTM(3, 4, dtype="bfloat16")
    x = backplane.asarray(rand((2, 1, 3), 0)).to("bfloat16")
    want = IMPL if onednn_has_bf16() else "packed:cpu"
    assert backends.explain("rnn", m, x).chosen == want
    with backends.mkldnn.flags(enabled=False):
        assert backends.explain("rnn", m, x).chosen == "packed:cpu"
    lstmp = nn.LSTM(3, 4, proj_size=2, dtype="bfloat16")
    assert backends.explain("rnn", lstmp, x).chosen == "packed:cpu"
    f32 = nn.LSTM(3, 4)
    assert backends.explain("rnn", f32, rand((2, 1, 3), 0).astype(np.float32)).chosen == "packed:cpu"


def test_mkldnn_enabled_governs_it():
    m = nn.LSTM(3, 4)
    x = rand((2, 1, 3), 0).astype(np.float32)
    assert reasons(m, x) == []
    with backends.mkldnn.flags(enabled=False):
        assert reasons(m, x) == ["enabled: expected mkldnn.enabled = True, got False"]
        with pytest.raises(_C.NoImplementationError, match="mkldnn.enabled"):
            run(m, backplane.asarray(x))
    assert reasons(m, x) == []


def test_mkldnn_deterministic_rejects_it():
    m = nn.GRU(3, 4)
    x = rand((2, 1, 3), 0).astype(np.float32)
    with backends.mkldnn.flags(enabled=True, deterministic=True):
        assert reasons(m, x)[0].startswith("deterministic: expected mkldnn.deterministic = False")
    assert reasons(m, x) == []


def test_declined_configurations_say_why():
    f64 = nn.LSTM(3, 4, dtype="float64")
    assert any(r.startswith("dtype:") and "float64" in r for r in reasons(f64, rand((2, 1, 3), 0)))
    f16 = nn.GRU(3, 4, dtype="float16")
    assert any(r.startswith("dtype:") and "float16" in r
               for r in reasons(f16, backplane.asarray(rand((2, 1, 3), 0)).to("float16")))
    m = nn.LSTM(3, 4)
    x = rand((3, 2, 3), 0).astype(np.float32)
    packed = pack_padded_sequence(backplane.asarray(x), [3, 1])
    assert reasons(m, packed) == ["lengths: expected every sequence running all steps (oneDNN's RNN primitives have "
                                  "no per-sequence lengths), got a PackedSequence of different lengths"]
    full = pack_padded_sequence(backplane.asarray(x), [3, 3])  # every sequence full: no lengths reach the op
    assert reasons(m, full) == []
    with pytest.raises(_C.NoImplementationError, match="per-sequence lengths"):
        run(m, packed)
    if onednn_has_bf16():
        lstmp = nn.LSTM(3, 4, proj_size=2, dtype="bfloat16")
        assert reasons(lstmp, backplane.asarray(x).to("bfloat16")) == [
            "projection: expected no proj_size with bfloat16 (oneDNN 2.6 has no bf16 projection LSTM), "
            "got proj_size=2 with bfloat16"]
