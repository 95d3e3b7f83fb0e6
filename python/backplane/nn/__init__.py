"""backplane.nn: attention controls (and, as they land, the nn modules)."""

from . import attention, functional, utils
from ._rnn import GRU, LSTM, RNN, RNNBase

__all__ = ["attention", "functional", "utils", "RNNBase", "RNN", "LSTM", "GRU"]
