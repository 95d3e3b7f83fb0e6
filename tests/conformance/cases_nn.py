"""backplane.nn's recurrent and attention modules side by side with
torch.nn's: the same constructor arguments on both sides, the same weights
(each parameter filled from a generator seeded by its state-dict key, so a
key or shape that differs shows up as a difference), eval mode, and the
outputs of forward for each option."""

import contextlib
import zlib

import numpy as np

from cases import case


def _numpy(x):
    if hasattr(x, "resolve_conj"):  # torch
        return x.detach().numpy()
    return np.asarray(x)


def _arr(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _filled(S, module):
    """The module with every state-dict entry set from its key; returns [keys and shapes]."""
    state = module.state_dict()
    layout = [(k, tuple(v.shape)) for k, v in state.items()]
    weights = {k: S.tensor(_arr(zlib.crc32(k.encode()), shape) * 0.3) for k, shape in layout}
    module.load_state_dict(weights)
    module.eval()
    return [[k, list(shape)] for k, shape in sorted(layout)]


def _module_case(cls, ctor, inputs, call=None):
    """inputs: {name: array or a function of S}; call(S, module, tensors) runs forward (default: positional)."""
    def run(S):
        module = getattr(S.top.nn, cls)(**ctor)
        layout = _filled(S, module)
        tensors = {k: (v(S) if callable(v) else S.tensor(v)) for k, v in inputs.items()}
        out = call(S, module, tensors) if call else module(*tensors.values())
        flat = out if isinstance(out, (tuple, list)) else (out,)
        return [layout] + [_numpy(o) if o is not None and not isinstance(o, tuple) else
                           [_numpy(p) for p in o] if isinstance(o, tuple) else None for o in flat]
    return run


# ---------------------------------------------------------------- RNN / LSTM / GRU
_x = _arr(1, (7, 3, 5))  # seq, batch, features
RNNS = {
    "RNN tanh": ("RNN", {"input_size": 5, "hidden_size": 6}, {"x": _x}),
    "RNN relu 2 layers": ("RNN", {"input_size": 5, "hidden_size": 4, "num_layers": 2, "nonlinearity": "relu"},
                          {"x": _x}),
    "LSTM": ("LSTM", {"input_size": 5, "hidden_size": 6}, {"x": _x}),
    "LSTM bidirectional 2 layers": ("LSTM", {"input_size": 5, "hidden_size": 4, "num_layers": 2,
                                             "bidirectional": True}, {"x": _x}),
    "LSTM proj_size": ("LSTM", {"input_size": 5, "hidden_size": 6, "proj_size": 3}, {"x": _x}),
    "LSTM batch_first no bias": ("LSTM", {"input_size": 5, "hidden_size": 4, "batch_first": True, "bias": False},
                                 {"x": _arr(2, (3, 7, 5))}),
    "LSTM unbatched": ("LSTM", {"input_size": 5, "hidden_size": 4}, {"x": _arr(3, (7, 5))}),
    "GRU": ("GRU", {"input_size": 5, "hidden_size": 6}, {"x": _x}),
    "GRU bidirectional batch_first": ("GRU", {"input_size": 5, "hidden_size": 4, "bidirectional": True,
                                              "batch_first": True}, {"x": _arr(4, (3, 7, 5))}),
    "GRU with h0": ("GRU", {"input_size": 5, "hidden_size": 4, "num_layers": 2},
                    {"x": _x, "h0": _arr(5, (2, 3, 4))}),
}
for _id, (_cls, _ctor, _inputs) in RNNS.items():
    case(f"nn:{_id}")(_module_case(_cls, _ctor, _inputs))
case("nn:LSTM with h0 c0")(_module_case(
    "LSTM", {"input_size": 5, "hidden_size": 4, "num_layers": 2}, {"x": _x},
    lambda S, m, t: m(t["x"], (S.tensor(_arr(6, (2, 3, 4))), S.tensor(_arr(7, (2, 3, 4)))))))


def _packed(S, module, t):
    rnn_utils = S.top.nn.utils.rnn
    lengths = [7, 5, 2]
    packed = rnn_utils.pack_padded_sequence(t["x"], lengths)
    out, hidden = module(packed)
    padded, out_lengths = rnn_utils.pad_packed_sequence(out)
    return padded, hidden, out_lengths


case("nn:LSTM packed sequence")(_module_case("LSTM", {"input_size": 5, "hidden_size": 4, "bidirectional": True},
                                             {"x": _x}, _packed))
case("nn:GRU packed sequence")(_module_case("GRU", {"input_size": 5, "hidden_size": 4, "num_layers": 2},
                                            {"x": _x}, _packed))
case("nn:LSTM error input size")(_module_case("LSTM", {"input_size": 4, "hidden_size": 4}, {"x": _x}))
case("nn:GRU error h0 shape")(_module_case("GRU", {"input_size": 5, "hidden_size": 4},
                                           {"x": _x, "h0": _arr(5, (2, 3, 4))}))


# ---------------------------------------------------------------- MultiheadAttention
_q = _arr(11, (6, 2, 16))  # L, N, E
_kv = _arr(12, (9, 2, 16))
_pad = np.zeros((2, 9), bool)
_pad[1, 6:] = True


def _mha_call(**kw):
    def call(S, m, t):
        extra = {k: (S.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        return m(t["q"], t["k"], t["v"], **extra)
    return call


_BASE = {"embed_dim": 16, "num_heads": 4}
MHAS = {
    "self": (_BASE, {"q": _q, "k": _q, "v": _q}, {}),
    "cross": (_BASE, {"q": _q, "k": _kv, "v": _kv}, {}),
    "batch_first": ({**_BASE, "batch_first": True}, {"q": _arr(13, (2, 6, 16))} | {"k": _arr(13, (2, 6, 16)),
                                                                                   "v": _arr(13, (2, 6, 16))}, {}),
    "kdim vdim": ({**_BASE, "kdim": 8, "vdim": 12}, {"q": _q, "k": _arr(14, (9, 2, 8)), "v": _arr(15, (9, 2, 12))}, {}),
    "no bias": ({**_BASE, "bias": False}, {"q": _q, "k": _kv, "v": _kv}, {}),
    "bias_kv zero_attn": ({**_BASE, "add_bias_kv": True, "add_zero_attn": True}, {"q": _q, "k": _kv, "v": _kv}, {}),
    "key padding mask": (_BASE, {"q": _q, "k": _kv, "v": _kv}, {"key_padding_mask": _pad}),
    "float attn mask": (_BASE, {"q": _q, "k": _kv, "v": _kv}, {"attn_mask": _arr(16, (6, 9))}),
    "bool attn mask 3-d": (_BASE, {"q": _q, "k": _kv, "v": _kv}, {"attn_mask": _arr(17, (8, 6, 9)) > 0.5}),
    "weights per head": (_BASE, {"q": _q, "k": _kv, "v": _kv}, {"average_attn_weights": False}),
    "no weights": (_BASE, {"q": _q, "k": _q, "v": _q}, {"need_weights": False}),
    "causal": (_BASE, {"q": _q, "k": _q, "v": _q}, {"attn_mask": np.triu(np.full((6, 6), -np.inf, np.float32), 1),
                                                     "is_causal": True}),
}
for _id, (_ctor, _inputs, _kw) in MHAS.items():
    case(f"nn:MultiheadAttention {_id}")(_module_case("MultiheadAttention", _ctor, _inputs, _mha_call(**_kw)))
case("nn:MultiheadAttention error heads do not divide")(
    lambda S: S.top.nn.MultiheadAttention(embed_dim=10, num_heads=4))


# ---------------------------------------------------------------- Transformer encoder
_src = _arr(21, (2, 7, 16))  # batch_first
_src_pad = np.zeros((2, 7), bool)
_src_pad[0, 5:] = True


def _layer_call(**kw):
    def call(S, m, t):
        return m(t["src"], **{k: (S.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()})
    return call


_LAYER = {"d_model": 16, "nhead": 4, "dim_feedforward": 32, "dropout": 0.0, "batch_first": True}
LAYERS = {
    "post-norm": (_LAYER, {}), "norm_first gelu": ({**_LAYER, "norm_first": True, "activation": "gelu"}, {}),
    "padding mask": (_LAYER, {"src_key_padding_mask": _src_pad}),
    "seq first": ({**_LAYER, "batch_first": False}, {}),
}
for _id, (_ctor, _kw) in LAYERS.items():
    case(f"nn:TransformerEncoderLayer {_id}")(_module_case("TransformerEncoderLayer", _ctor, {"src": _src},
                                                           _layer_call(**_kw)))


def _encoder(S, m, t):
    # Under no_grad, as inference runs: PyTorch takes its nested-tensor path (zeros at the padding) only
    # when autograd is off; Backplane has no autograd, so it always may (docs/differences.md, MHA section).
    with getattr(S.top, "no_grad", contextlib.nullcontext)():
        return m(t["src"], src_key_padding_mask=S.tensor(_src_pad))


case("nn:TransformerEncoder padded")(lambda S: _module_case(
    "TransformerEncoder", {"encoder_layer": S.top.nn.TransformerEncoderLayer(**_LAYER), "num_layers": 2},
    {"src": _src}, _encoder)(S))
