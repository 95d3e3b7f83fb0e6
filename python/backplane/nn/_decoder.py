"""``backplane.nn.TransformerDecoderLayer``: torch.nn.TransformerDecoderLayer's constructor, keys and forward.

PyTorch has no fused decoder path: its forward composes two MultiheadAttention
calls (self-attention over ``tgt``, then attention over ``memory``) and the
feed-forward block. So does this one; each attention is a
``backplane.nn.MultiheadAttention`` call, which takes its own fast path when
PyTorch's would (spec §7.1: the self-attention one can, in eval mode with
batch_first). Layer norms, the activation and the residual adds run in NumPy;
the feed-forward projections through the matmul dispatcher.
"""

import math

import numpy as np

from .._tensor import asarray
from ._mha import MultiheadAttention
from ._mha_module import LayerNorm, Linear, Module, _as_numpy, _forward_only
from ._transformer import _activation_code, _Dropout, _layer_arguments

__all__ = ["TransformerDecoderLayer"]

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _apply_activation(code, activation, h):
    if code == 1:
        return np.maximum(h, 0)
    if code == 2:
        return (0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))).astype(h.dtype)
    return np.asarray(activation(h), dtype=h.dtype)


class TransformerDecoderLayer(Module):
    """torch.nn.TransformerDecoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
    layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None).

    Keys: self_attn.*, multihead_attn.*, linear1.*, linear2.*, norm1.*, norm2.*, norm3.*. Forward only: in
    training mode a dropout > 0 raises NotImplementedError (call eval()).
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        dt = _layer_arguments(device, dtype, activation)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dt)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dt)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dt)
        self.dropout = _Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dt)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dt)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dt)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dt)
        self.dropout1, self.dropout2, self.dropout3 = _Dropout(dropout), _Dropout(dropout), _Dropout(dropout)
        self._activation_code = _activation_code(activation)
        self.activation = activation

    def extra_repr(self):
        return f"d_model={self.self_attn.embed_dim}, nhead={self.self_attn.num_heads}"

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        _forward_only("TransformerDecoderLayer", self, self.dropout.p)
        x = _as_numpy(asarray(tgt)).copy()
        mem = asarray(memory)

        def sa(h):
            h = asarray(np.ascontiguousarray(h))
            return self.self_attn(h, h, h, attn_mask=tgt_mask, key_padding_mask=tgt_key_padding_mask,
                                  is_causal=tgt_is_causal, need_weights=False)[0].numpy()

        def cross(h):
            return self.multihead_attn(h, mem, mem, attn_mask=memory_mask, key_padding_mask=memory_key_padding_mask,
                                       is_causal=memory_is_causal, need_weights=False)[0].numpy()

        def ff(h):
            hidden = _apply_activation(self._activation_code, self.activation, self.linear1(h).numpy())
            return self.linear2(hidden).numpy()

        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + cross(self.norm2(x))
            x = x + ff(self.norm3(x))
        else:
            x = self.norm1(x + sa(x))
            x = self.norm2(x + cross(x))
            x = self.norm3(x + ff(x))
        return asarray(np.ascontiguousarray(x))
