"""backplane.nn: attention controls (and, as they land, the nn modules)."""

from . import attention, functional
from ._mha import MultiheadAttention
from ._transformer import TransformerEncoder, TransformerEncoderLayer
from ._decoder import TransformerDecoderLayer

__all__ = ["attention", "functional", "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer"]
