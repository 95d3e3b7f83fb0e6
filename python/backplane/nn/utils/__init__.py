"""backplane.nn.utils: helpers of the nn modules (``rnn``: PackedSequence and its packing functions)."""

from . import rnn

__all__ = ["rnn"]
