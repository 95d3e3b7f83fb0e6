"""backplane.nn: attention controls, MultiheadAttention and the Transformer layers, and the recurrent layers."""

from . import attention, functional, utils
from ._mha import MultiheadAttention
from ._transformer import TransformerEncoder, TransformerEncoderLayer
from ._decoder import TransformerDecoderLayer
from ._rnn import GRU, LSTM, RNN, RNNBase

__all__ = ["attention", "functional", "utils", "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "RNNBase", "RNN", "LSTM", "GRU"]
