"""The PyTorch peer of ``python -m backplane.bench mha --peer torch``: torch.nn.TransformerEncoderLayer in
eval mode under inference_mode (PyTorch's fast path, torch._transformer_encoder_layer_fwd), on the very
weights and inputs of the benchmark's problem."""

__all__ = ["torch_encoder_layer"]

_KEYS = {"in_proj_weight": "self_attn.in_proj_weight", "in_proj_bias": "self_attn.in_proj_bias",
         "out_proj_weight": "self_attn.out_proj.weight", "out_proj_bias": "self_attn.out_proj.bias",
         "linear1_weight": "linear1.weight", "linear1_bias": "linear1.bias",
         "linear2_weight": "linear2.weight", "linear2_bias": "linear2.bias",
         "norm1_weight": "norm1.weight", "norm1_bias": "norm1.bias",
         "norm2_weight": "norm2.weight", "norm2_bias": "norm2.bias"}


def torch_encoder_layer(kwargs):
    """A callable running PyTorch's layer on the problem the mha form's keyword arguments describe."""
    import torch
    src = torch.from_dlpack(kwargs["src"])
    E, H, F = src.shape[-1], kwargs["num_heads"], kwargs["linear1_weight"].shape[0]
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.0, batch_first=kwargs.get("batch_first", False),
                                             dtype=src.dtype).eval()
    layer.load_state_dict({_KEYS[k]: torch.from_dlpack(v) for k, v in kwargs.items() if k in _KEYS})
    kpm = kwargs.get("src_key_padding_mask")
    kpm = torch.from_dlpack(kpm) if kpm is not None else None

    def run():
        with torch.inference_mode():
            return layer(src, src_key_padding_mask=kpm)
    return run
