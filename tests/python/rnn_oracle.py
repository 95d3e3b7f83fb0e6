"""An independent float64 NumPy RNN / LSTM / GRU (each cell from PyTorch's
documented formulas, the layer and direction loops written out), for the
tests of the rnn op and the nn modules (test_rnn.py, tests/gpu/test_rnn_gpu.py)."""

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def cell(mode, w, x, h, c):
    """One step for a batch: x [B, in], h [B, out], c [B, H] -> (h', c')."""
    gi = x @ w["w_ih"].T + (w["b_ih"] if w.get("b_ih") is not None else 0.0)
    gh = h @ w["w_hh"].T + (w["b_hh"] if w.get("b_hh") is not None else 0.0)
    if mode == "RNN_TANH":
        return np.tanh(gi + gh), None
    if mode == "RNN_RELU":
        return np.maximum(gi + gh, 0.0), None
    if mode == "GRU":
        xr, xz, xn = np.split(gi, 3, axis=1)
        hr, hz, hn = np.split(gh, 3, axis=1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        return (1.0 - z) * n + z * h, None
    i, f, g, o = np.split(gi + gh, 4, axis=1)
    c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h2 = sigmoid(o) * np.tanh(c2)
    if w.get("w_hr") is not None:
        h2 = h2 @ w["w_hr"].T
    return h2, c2


def weights_of(state, layer, direction):
    s = f"_l{layer}" + ("_reverse" if direction else "")
    get = lambda k: None if k + s not in state else np.asarray(state[k + s], dtype=np.float64)  # noqa: E731
    return {"w_ih": get("weight_ih"), "w_hh": get("weight_hh"), "b_ih": get("bias_ih"), "b_hh": get("bias_hh"),
            "w_hr": get("weight_hr")}


def run(mode, state, x, num_layers, bidirectional, h0=None, c0=None, lengths=None, masks=None):
    """x time-major [T, B, in]; state: PyTorch's names -> arrays. Returns output [T, B, D*out], h_n, c_n.

    lengths: per batch entry (outputs past a length are zero, h_n the state at its last step).
    masks: per layer below the last, a [T, B, D*out] multiplier (dropout) applied to its output."""
    x = np.asarray(x, dtype=np.float64)
    T, B, _ = x.shape
    D = 2 if bidirectional else 1
    w0 = weights_of(state, 0, 0)
    out_size = w0["w_hh"].shape[1]
    hidden = w0["w_hh"].shape[0] // {"LSTM": 4, "GRU": 3}.get(mode, 1)
    h0 = np.zeros((num_layers * D, B, out_size)) if h0 is None else np.asarray(h0, dtype=np.float64)
    c0 = np.zeros((num_layers * D, B, hidden)) if c0 is None else np.asarray(c0, dtype=np.float64)
    lengths = [T] * B if lengths is None else list(lengths)
    hn, cn = np.zeros_like(h0), np.zeros_like(c0)
    layer_in = x
    for layer in range(num_layers):
        out = np.zeros((T, B, D * out_size))
        for d in range(D):
            w = weights_of(state, layer, d)
            k = layer * D + d
            for b in range(B):
                h, c = h0[k, b:b + 1], c0[k, b:b + 1]
                steps = range(lengths[b]) if d == 0 else reversed(range(lengths[b]))
                for t in steps:
                    h, c2 = cell(mode, w, layer_in[t, b:b + 1], h, c)
                    c = c if c2 is None else c2
                    out[t, b, d * out_size:(d + 1) * out_size] = h[0]
                hn[k, b], cn[k, b] = h[0], c[0]
        if masks is not None and layer + 1 < num_layers:
            out = out * masks[layer]
        layer_in = out
    return layer_in, hn, cn
