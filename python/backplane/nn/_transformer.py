"""``backplane.nn.TransformerEncoderLayer`` and ``TransformerEncoder`` with torch.nn's constructors and keys.

The layer's forward runs the ``mha`` op (src/ops/mha): fastpath:cpu exactly
when PyTorch's ``torch._transformer_encoder_layer_fwd`` would run (spec §7.2),
else composed:any. The encoder adds PyTorch's nested-tensor ("sparsity")
path (spec §7.3): when its conditions hold, each layer skips the padded
tokens of ``src_key_padding_mask`` and the output has zeros there. An
activation other than relu/gelu (a callable) runs in Python around the
attention op; the callable receives and returns NumPy arrays.
"""

import copy
import warnings

import numpy as np

from .. import _C
from .._tensor import asarray
from ._mha import MultiheadAttention, _mask
from ._mha_module import LayerNorm, Linear, Module, _as_numpy, _check_device, _dtype_of, _forward_only

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]


class _Dropout(Module):
    """torch.nn.Dropout's place in the module tree (no parameters); forward-only modules never drop."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def extra_repr(self):
        return f"p={self.p}"


class _ModuleList(Module):
    """torch.nn.ModuleList's keys ("layers.0.…")."""

    def __init__(self, modules):
        super().__init__()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


def _activation_code(activation):
    """PyTorch's activation_relu_or_gelu: 1 relu, 2 gelu, 0 anything else (run in Python)."""
    if isinstance(activation, str):
        return {"relu": 1, "gelu": 2}[activation]
    name = getattr(activation, "__name__", None) or type(activation).__name__
    # torch.nn.functional.relu / gelu and torch.nn.ReLU / GELU() (exact gelu only) are recognised by name.
    if name in ("relu", "ReLU"):
        return 1
    if name in ("gelu", "GELU") and getattr(activation, "approximate", "none") == "none":
        return 2
    return 0


def _layer_norm(x, norm):
    return norm.forward(x)


def _layer_arguments(device, dtype, activation):
    """The checks the encoder and decoder layers' constructors share (PyTorch's texts); returns the dtype."""
    _check_device(device)
    dt = _dtype_of(dtype)
    if isinstance(activation, str) and activation not in ("relu", "gelu"):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    if not isinstance(activation, str) and not callable(activation):
        raise _C.BackplaneValueError(f"activation: expected 'relu', 'gelu' or a callable, got {activation!r}")
    return dt


class TransformerEncoderLayer(Module):
    """torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
    layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None, dtype=None).

    Keys: self_attn.{in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias}, linear1.*, linear2.*,
    norm1.*, norm2.*. Forward only: in training mode a dropout > 0 raises NotImplementedError (call eval()).
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        dt = _layer_arguments(device, dtype, activation)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dt)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dt)
        self.dropout = _Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dt)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dt)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dt)
        self.dropout1 = _Dropout(dropout)
        self.dropout2 = _Dropout(dropout)
        self.activation_relu_or_gelu = _activation_code(activation)
        self.activation = activation

    def extra_repr(self):
        return f"d_model={self.self_attn.embed_dim}, nhead={self.self_attn.num_heads}"

    def _op_call(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False, nested=False):
        """(entry, args, kwargs) of the op call this forward makes."""
        a = self.self_attn
        kwargs = dict(in_proj_weight=a.in_proj_weight, in_proj_bias=a.in_proj_bias,
                      out_proj_weight=a.out_proj.weight, out_proj_bias=a.out_proj.bias,
                      norm1_weight=self.norm1.weight, norm1_bias=self.norm1.bias,
                      norm2_weight=self.norm2.weight, norm2_bias=self.norm2.bias,
                      linear1_weight=self.linear1.weight, linear1_bias=self.linear1.bias,
                      linear2_weight=self.linear2.weight, linear2_bias=self.linear2.bias,
                      src_mask=_mask(src_mask), src_key_padding_mask=_mask(src_key_padding_mask),
                      is_causal=is_causal, activation=("other", "relu", "gelu")[self.activation_relu_or_gelu],
                      norm_first=self.norm_first, norm1_eps=float(self.norm1.eps), norm2_eps=float(self.norm2.eps),
                      batch_first=a.batch_first, training=self.training, dropout=float(self.dropout.p),
                      nested=nested)
        return "mha", (asarray(src), a.num_heads), kwargs

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        return self._forward(src, src_mask, src_key_padding_mask, is_causal, nested=False)

    def _forward(self, src, src_mask, src_key_padding_mask, is_causal, nested):
        _forward_only("TransformerEncoderLayer", self, self.dropout.p)
        if self.activation_relu_or_gelu == 0:
            return self._forward_python(src, src_mask, src_key_padding_mask, is_causal, nested)
        from . import _mha_ops
        _, args, kwargs = self._op_call(src, src_mask, src_key_padding_mask, is_causal, nested)
        return _mha_ops.transformer_encoder_layer(*args, **kwargs)[0]

    def _forward_python(self, src, src_mask, src_key_padding_mask, is_causal, nested):
        """PyTorch's slow path with a Python activation: attention through the op, the rest in NumPy."""
        x = _as_numpy(asarray(src)).copy()

        def sa(h):
            out, _ = self.self_attn(h, h, h, attn_mask=src_mask, key_padding_mask=src_key_padding_mask,
                                    need_weights=False, is_causal=is_causal)
            return out.numpy()

        def ff(h):
            hidden = np.asarray(self.activation(self.linear1(h).numpy()), dtype=x.dtype)
            return self.linear2(hidden).numpy()

        if self.norm_first:
            x = x + sa(_layer_norm(x, self.norm1))
            x = x + ff(_layer_norm(x, self.norm2))
        else:
            x = _layer_norm(x + sa(x), self.norm1)
            x = _layer_norm(x + ff(x), self.norm2)
        if nested:
            pad = _as_numpy(asarray(src_key_padding_mask)).astype(bool)
            x[pad if self.self_attn.batch_first else pad.T] = 0
        return asarray(np.ascontiguousarray(x))


def _why_not_nested_at_init(layer):
    """PyTorch's reason (spec §7.3) why an encoder built on `layer` cannot use nested tensors, or ""."""
    enc = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{enc} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{enc}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{enc}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{enc}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{enc}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{enc}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{enc}.norm1.eps was not equal to {enc}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{enc}.self_attn.num_heads is odd"
    return ""


def _left_aligned(pad):
    """Every row of the padding mask [N, S] (True = padding) is valid tokens first, then padding."""
    return bool(np.all(pad[:, 1:] >= pad[:, :-1]))


def _causal_mask(L, dtype):
    m = np.zeros((L, L), dtype)
    m[np.triu_indices(L, 1)] = -np.inf
    return m


class TransformerEncoder(Module):
    """torch.nn.TransformerEncoder(encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
    mask_check=True): num_layers deep copies of encoder_layer (keys layers.0.…), then the optional norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        if not isinstance(num_layers, int) or num_layers < 0:
            raise _C.BackplaneValueError(f"num_layers: expected a non-negative int, got {num_layers!r}")
        self.layers = _ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_nested_at_init(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def why_not_sparsity_fast_path(self, src, mask=None, src_key_padding_mask=None):
        """PyTorch's reason (spec §7.3) why this call does not skip the padding, or "" when it does."""
        from ..backends import mha
        first = self.layers[0] if len(self) else None
        if not mha.get_fastpath_enabled():
            return "torch.backends.mha.get_fastpath_enabled() was not True"
        if not self.use_nested_tensor:
            return "self.use_nested_tensor (set in init) was not True"
        if first is None or first.training:
            return "self.layers[0] was in training mode"
        ndim = np.ndim(src) if not isinstance(src, _C.Tensor) else len(src.shape)
        if ndim != 3:
            return f"input not batched; expected src.dim() of 3 but got {ndim}"
        if src_key_padding_mask is None:
            return "src_key_padding_mask was None"
        pad = _as_numpy(asarray(src_key_padding_mask))
        if pad.dtype != bool:
            pad = pad != 0  # a float mask: 0 keeps, anything else (-inf) pads
        if self.mask_check and not _left_aligned(pad):
            return "mask_check enabled, and src and src_key_padding_mask was not left aligned"
        if mask is not None:
            return "src_key_padding_mask and mask were both supplied"
        return ""

    def __len__(self):
        return len(self.layers)

    def _op_call(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """The op call of the first layer (what backends.explain("mha", encoder, ...) shows), padding skipped
        when this encoder would skip it."""
        if not len(self):
            raise _C.BackplaneValueError("TransformerEncoder with no layers runs no op")
        nested = not self.why_not_sparsity_fast_path(src, mask, src_key_padding_mask)
        return self.layers[0]._op_call(src, mask, src_key_padding_mask, bool(is_causal), nested)

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        nested = not self.why_not_sparsity_fast_path(src, mask, src_key_padding_mask)
        x = asarray(src)
        if is_causal is None:
            is_causal = False
            if mask is not None:
                m = _as_numpy(asarray(mask))
                L = x.shape[1] if self.layers[0].self_attn.batch_first else x.shape[0]
                causal = _causal_mask(L, m.dtype if m.dtype != bool else np.float32)
                if m.dtype == bool:
                    causal = np.isinf(causal)
                is_causal = m.shape == causal.shape and bool(np.all(m == causal))
        for layer in self.layers:
            x = layer._forward(x, mask, src_key_padding_mask, is_causal, nested)
        if self.norm is not None:
            x = asarray(np.ascontiguousarray(self.norm(x)))
        return x
