"""What the RNN tests share (test_rnn.py, test_rnn_onednn.py): the four
modes as modules, random inputs, float64 views of outputs and weights for
the oracle (rnn_oracle.py), and a call with one implementation forced."""

import numpy as np

from backplane import backends, nn

MODES = {"RNN_TANH": (nn.RNN, {}), "RNN_RELU": (nn.RNN, {"nonlinearity": "relu"}), "LSTM": (nn.LSTM, {}),
         "GRU": (nn.GRU, {})}


def make(mode, *args, **kwargs):
    cls, extra = MODES[mode]
    return cls(*args, **extra, **kwargs)


def arr(t):
    return np.asarray(t.to("float64") if t.dtype in ("float16", "bfloat16") else t, dtype=np.float64)


def state64(m):
    return {k: np.asarray(v, dtype=np.float64) for k, v in m.state_dict().items()}


def rand(shape, seed, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def run_with(m, x, hx, impl):
    """m(x, hx) with `impl` forced (None: the default choice)."""
    if impl is None:
        return m(x, hx)
    with backends.implementations("rnn", impl):
        return m(x, hx)


def split_state(mode, state):
    return state if mode == "LSTM" else (state, None)
