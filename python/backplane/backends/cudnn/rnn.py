"""backplane.backends.cudnn.rnn: the fp32 precision of cuDNN RNNs and PyTorch's cuDNN RNN helpers.

A module, as ``torch.backends.cudnn.rnn`` is: ``fp32_precision`` (flag row
cudnn.rnn.fp32_precision, Note [fp32 precision tree]), ``get_cudnn_mode``,
``Unserializable`` and ``init_dropout_state``; and ``get_weight_layout``, the
size of a configuration's packed weight buffer and where each parameter
sits in it (what PyTorch's ``get_num_weights`` / ``get_parameters`` ask of
cuDNN, in cuDNN 9's API: cudnnGetRNNWeightSpaceSize / cudnnGetRNNWeightParams).
"""

from ... import _C, _errors
from .. import _props

__all__ = ["fp32_precision", "get_cudnn_mode", "Unserializable", "init_dropout_state", "get_weight_layout"]

# cuDNN's cudnnRNNMode_t values.
_MODES = {"RNN_RELU": 0, "RNN_TANH": 1, "LSTM": 2, "GRU": 3}


def get_cudnn_mode(mode):
    """cuDNN's number for an RNN mode name ("RNN_RELU", "RNN_TANH", "LSTM", "GRU")."""
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise _errors.bad_value("backplane.backends.cudnn.rnn.get_cudnn_mode", mode, ", ".join(_MODES),
                                message=f"Unknown mode: {mode} (expected one of: {', '.join(_MODES)})") from None


class Unserializable:
    """Holds a value that is dropped, not saved, when pickled (a dropout state tied to a device)."""

    def __init__(self, inner):
        self.inner = inner

    def get(self):
        return self.inner

    def __getstate__(self):
        return "<unserializable>"

    def __setstate__(self, state):
        self.inner = None


def init_dropout_state(dropout, train, dropout_seed, dropout_state):
    """The cuDNN dropout state of the current CUDA device, made once and kept in ``dropout_state``.

    Needs a CUDA device, as PyTorch's does. Without dropout (``dropout`` 0 or
    not training) the state is None. A dropout state for a cuDNN RNN is not
    something Backplane builds (its RNNs keep their own), so a non-zero
    dropout raises NotImplementedError.
    """
    subject = "backplane.backends.cudnn.rnn.init_dropout_state"
    if not _C.cuda_is_available():
        raise _errors.runtime(subject, f"{subject} needs a CUDA device: {_C.cuda_unavailable_reason()}")
    name = "desc_0"  # Backplane's current CUDA device is always device 0
    p = dropout if train else 0
    held = dropout_state.get(name)
    if held is None or held.get() is None:
        if p == 0:
            dropout_state[name] = Unserializable(None)
        else:
            raise _errors.not_implemented(subject, f"{subject}: Backplane does not build cuDNN RNN dropout states "
                                          f"(dropout={dropout!r}, seed={dropout_seed!r})")
    return dropout_state[name].get()


def get_weight_layout(mode, input_size, hidden_size, num_layers=1, proj_size=0, bias=True, bidirectional=False,
                      dtype="float32", device="cuda"):
    """(size of the packed buffer in elements, {parameter name: (offset in elements, shape)}) of a configuration.

    On a CUDA device the layout is cuDNN's weight space (RuntimeError when
    cuDNN cannot be used); on "cpu" it is Backplane's own (Note [RNN weight
    buffer] in src/ops/rnn/params.h). ``mode`` is "RNN_TANH", "RNN_RELU",
    "LSTM" or "GRU"; names and shapes are PyTorch's, in _flat_weights order.
    """
    from ...nn import _rnn, _rnn_native

    get_cudnn_mode(mode)  # ValueError for an unknown mode, as PyTorch's
    layout = _rnn_native.weight_layout(mode=mode, input_size=input_size, hidden_size=hidden_size,
                                       num_layers=num_layers, proj_size=proj_size, bias=bias,
                                       bidirectional=bidirectional, dtype=str(dtype), device=str(device))
    shapes = _rnn._flat_weight_shapes(mode, input_size, hidden_size, num_layers, bias, bidirectional, proj_size)
    return layout[0], {name: (offset, shape) for (name, shape), offset in zip(shapes, layout[1:])}


_props.install_module_properties(__name__, "cudnn.rnn")
