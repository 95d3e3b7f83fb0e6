"""backplane.backends.cudnn.rnn: the fp32 precision of cuDNN RNNs and PyTorch's cuDNN RNN helpers.

A module, as ``torch.backends.cudnn.rnn`` is: ``fp32_precision`` (flag row
cudnn.rnn.fp32_precision, Note [fp32 precision tree]), ``get_cudnn_mode``,
``Unserializable`` and ``init_dropout_state``.
"""

from ... import _C, _errors
from .. import _props

__all__ = ["fp32_precision", "get_cudnn_mode", "Unserializable", "init_dropout_state"]

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


_props.install_module_properties(__name__, "cudnn.rnn")
