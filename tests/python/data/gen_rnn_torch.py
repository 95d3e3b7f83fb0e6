"""Writes rnn_torch.npz: state dicts saved by PyTorch (LSTM with proj_size,
bidirectional, 2 layers, batch_first; GRU over a packed batch) with an input
and PyTorch's outputs, so test_rnn.py checks that weights trained in
PyTorch load unchanged without needing torch. Run once, with PyTorch:
    /work/wt-fidelity/.venv-peers/bin/python tests/python/data/gen_rnn_torch.py
"""

import pathlib

import numpy as np
import torch

torch.manual_seed(1234)
out = {}

lstm = torch.nn.LSTM(3, 6, num_layers=2, bidirectional=True, batch_first=True, proj_size=4)
x = torch.randn(2, 5, 3)
with torch.no_grad():
    y, (h, c) = lstm(x)
for k, v in lstm.state_dict().items():
    out["lstm." + k] = v.numpy()
out["lstm_input"], out["lstm_output"], out["lstm_h_n"], out["lstm_c_n"] = x.numpy(), y.numpy(), h.numpy(), c.numpy()

gru = torch.nn.GRU(3, 5)
xs = torch.randn(4, 3, 3)
lengths = [2, 4, 3]
packed = torch.nn.utils.rnn.pack_padded_sequence(xs, lengths, enforce_sorted=False)
with torch.no_grad():
    y, h = gru(packed)
padded, _ = torch.nn.utils.rnn.pad_packed_sequence(y)
for k, v in gru.state_dict().items():
    out["gru." + k] = v.numpy()
out["gru_input"], out["gru_lengths"] = xs.numpy(), np.array(lengths)
out["gru_output_padded"], out["gru_h_n"] = padded.numpy(), h.numpy()

np.savez_compressed(pathlib.Path(__file__).with_name("rnn_torch.npz"), **out)
