"""``backplane.nn.MultiheadAttention``: torch.nn.MultiheadAttention's constructor, parameters and forward.

The forward runs the ``mha`` op's entry ``multihead_attention`` (src/ops/mha):
its fast path (fastpath:cpu) exactly when PyTorch's would be taken
(``backends.mha.get_fastpath_enabled()`` and the conditions of spec §7.1),
else the composed path (composed:any). ``backends.explain("mha", module,
query, key, value)`` shows the choice; ``backends.mha.why_not_fast_path``
lists every failed condition. Inputs may be NumPy arrays, ``backplane.Tensor``
or anything with ``__dlpack__``; outputs are ``backplane.Tensor``. Passing one
object as query, key and value is self-attention, as in PyTorch.
"""

import numpy as np

from .. import _C
from .._tensor import asarray
from ._mha_module import Linear, Module, _check_device, _dtype_of, _forward_only, _rng

__all__ = ["MultiheadAttention"]


def _xavier_uniform(shape, dtype):
    fan_out, fan_in = shape[0], shape[1]
    bound = np.sqrt(6.0 / (fan_in + fan_out))
    return _rng().uniform(-bound, bound, shape).astype(dtype)


def _xavier_normal(shape, dtype):
    # [1, 1, E]: fan_in = size(1) * E, fan_out = size(0) * E, as torch.nn.init computes them.
    fan_in, fan_out = shape[1] * shape[2], shape[0] * shape[2]
    return _rng().normal(0.0, np.sqrt(2.0 / (fan_in + fan_out)), shape).astype(dtype)


def _tensors(query, key, value):
    """The three inputs as Tensors, keeping "the same object" the same Tensor (self-attention)."""
    q = asarray(query)
    k = q if key is query else asarray(key)
    v = k if value is key else (q if value is query else asarray(value))
    return q, k, v


def _mask(m):
    return None if m is None else asarray(m)


class _HeadsDoNotDivide(_C.BackplaneValueError, AssertionError):
    """embed_dim % num_heads != 0: a ValueError naming both values, and an AssertionError as PyTorch's assert is."""


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None).

    Parameters, as PyTorch names them: in_proj_weight [3E, E] (or q_proj_weight, k_proj_weight,
    v_proj_weight when kdim or vdim differ from embed_dim), in_proj_bias [3E], out_proj.weight,
    out_proj.bias, bias_k / bias_v [1, 1, E] with add_bias_kv. Forward only; dropout > 0 in training
    mode raises NotImplementedError (docs/differences.md).
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise _C.BackplaneValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                                         f"and num_heads={num_heads} instead")
        if embed_dim % num_heads != 0:  # PyTorch asserts this: catchable as AssertionError too
            raise _HeadsDoNotDivide(f"embed_dim must be divisible by num_heads, got embed_dim={embed_dim} and "
                                         f"num_heads={num_heads}")
        _check_device(device)
        dt = _dtype_of(dtype)
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        E = embed_dim
        if not self._qkv_same_embed_dim:
            self.register_parameter("q_proj_weight", _xavier_uniform((E, E), dt))
            self.register_parameter("k_proj_weight", _xavier_uniform((E, self.kdim), dt))
            self.register_parameter("v_proj_weight", _xavier_uniform((E, self.vdim), dt))
            self.register_parameter("in_proj_weight", None)
        else:
            self.register_parameter("in_proj_weight", _xavier_uniform((3 * E, E), dt))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        self.register_parameter("in_proj_bias", np.zeros(3 * E, dt) if bias else None)
        self.out_proj = Linear(E, E, bias=bias, dtype=dt)
        if bias:
            self.out_proj.bias[...] = 0
        self.register_parameter("bias_k", _xavier_normal((1, 1, E), dt) if add_bias_kv else None)
        self.register_parameter("bias_v", _xavier_normal((1, 1, E), dt) if add_bias_kv else None)
        self.add_zero_attn = add_zero_attn

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"

    def _op_call(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                 average_attn_weights=True, is_causal=False):
        """(entry, args, kwargs) of the op call this forward makes (also what explain and why_not_fast_path judge)."""
        q, k, v = _tensors(query, key, value)
        kwargs = dict(in_proj_weight=self.in_proj_weight, in_proj_bias=self.in_proj_bias,
                      out_proj_weight=self.out_proj.weight, out_proj_bias=self.out_proj.bias,
                      key_padding_mask=_mask(key_padding_mask), need_weights=need_weights,
                      attn_mask=_mask(attn_mask), average_attn_weights=average_attn_weights, is_causal=is_causal,
                      q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
                      v_proj_weight=self.v_proj_weight, bias_k=self.bias_k, bias_v=self.bias_v,
                      add_zero_attn=self.add_zero_attn, batch_first=self.batch_first, training=self.training,
                      dropout=float(self.dropout))
        return "multihead_attention", (q, k, v, self.num_heads), kwargs

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """(attn_output, attn_weights or None), as torch.nn.MultiheadAttention.forward."""
        from . import _mha_ops
        _forward_only("MultiheadAttention", self, self.dropout)
        _, args, kwargs = self._op_call(query, key, value, key_padding_mask, need_weights, attn_mask,
                                        average_attn_weights, is_causal)
        out = _mha_ops.multi_head_attention(*args, **kwargs)
        return out[0], (out[1] if need_weights else None)
