"""Recurrent layers: ``RNN`` (tanh / relu), ``LSTM`` (with ``proj_size``) and ``GRU``, as ``torch.nn``'s.

The constructors, parameter names and shapes, ``batch_first``,
bidirectional and stacked layers, dropout between layers (training mode,
from the generator ``backplane.manual_seed`` seeds), initial states,
unbatched inputs and ``PackedSequence`` inputs follow PyTorch. Forward only
(no autograd). Parameters are Backplane Tensors; ``state_dict()`` gives
NumPy arrays under PyTorch's keys and ``load_state_dict()`` takes arrays,
Tensors or anything DLPack speaks (PyTorch tensors), so weights trained in
PyTorch load unchanged.

Note [flatten_parameters]
Every module keeps its weights in ONE buffer laid out as the
implementations of its device read it (Note [RNN weight buffer] in
src/ops/rnn/params.h: Backplane's layout on the CPU, cuDNN's weight space on
CUDA), each parameter a view of it; forward hands that buffer to the op
with no copy. ``flatten_parameters()`` (called by the constructor, ``to()``
and ``load_state_dict()``) packs the current weights into a new buffer,
re-points every parameter at its view and records the views' data
pointers; it does nothing when they are already packed. Replacing a
parameter (``lstm.weight_hh_l0 = t``) unpacks the module: forward then
copies the weights into a temporary buffer on every call, with one
warning per module (PyTorch's text), until ``flatten_parameters()`` is
called again. PyTorch packs only for cuDNN; Backplane's CPU path reads the
buffer too (docs/differences.md).
"""

import math
import numbers
import warnings
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from .. import _C
from .._tensor import Tensor, asarray
from .utils.rnn import PackedSequence, _padded_of

__all__ = ["RNNBase", "RNN", "LSTM", "GRU"]

_NOT_CONTIGUOUS = ("RNN module weights are not part of single contiguous chunk of memory. This means they need to be "
                   "compacted at every call, possibly greatly increasing memory usage. To compact weights again call "
                   "flatten_parameters().")


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list


def _native():
    from . import _rnn_native  # generated from the rnn op's entries at import
    return _rnn_native


def _np_dtype_name(dtype):
    return None if dtype is None else str(np.dtype(dtype)) if not isinstance(dtype, str) else dtype


def _flat_weight_shapes(mode, input_size, hidden_size, num_layers, bias, bidirectional, proj_size):
    """[(name, shape)] of every parameter in PyTorch's _flat_weights order (per layer, per direction:
    weight_ih, weight_hh, [bias_ih, bias_hh], [weight_hr]; suffix _reverse for the second direction)."""
    gate_size = {"LSTM": 4, "GRU": 3}.get(mode, 1) * hidden_size
    real_hidden = proj_size if proj_size > 0 else hidden_size
    directions = 2 if bidirectional else 1
    out = []
    for layer in range(num_layers):
        for direction in range(directions):
            layer_input = input_size if layer == 0 else real_hidden * directions
            suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
            out += [("weight_ih" + suffix, (gate_size, layer_input)), ("weight_hh" + suffix, (gate_size, real_hidden))]
            if bias:
                out += [("bias_ih" + suffix, (gate_size,)), ("bias_hh" + suffix, (gate_size,))]
            if proj_size > 0:
                out.append(("weight_hr" + suffix, (proj_size, hidden_size)))
    return out


class RNNBase:
    """The shared part of RNN, LSTM and GRU (torch.nn.RNNBase)."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_flat_weights_names", [])
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
        if mode not in gates:
            raise ValueError("Unrecognized RNN mode: " + str(mode))
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self.training = True
        self._warned_not_packed = False
        self._flat_buffer = None
        self._flat_pointers = None
        self._all_weights = []
        shapes = _flat_weight_shapes(mode, input_size, hidden_size, num_layers, bias, bidirectional, proj_size)
        per_direction = len(shapes) // (num_layers * (2 if bidirectional else 1))
        for at in range(0, len(shapes), per_direction):
            self._all_weights.append([name for name, _ in shapes[at:at + per_direction]])
        self._flat_weights_names.extend(name for name, _ in shapes)
        self._shapes = dict(shapes)
        dtype = _np_dtype_name(dtype) or "float32"
        # reset_parameters' distribution, drawn from Backplane's default generator.
        stdv = 1.0 / math.sqrt(hidden_size)
        for name in self._flat_weights_names:
            count = int(np.prod(self._shapes[name]))
            u = np.asarray(_C._uniform(count), dtype=np.float64)
            value = ((2.0 * u - 1.0) * stdv).reshape(self._shapes[name])
            self._parameters[name] = asarray(value, dtype=dtype)
        if device is not None and str(device) != "cpu":
            for name in self._flat_weights_names:
                self._parameters[name] = self._parameters[name].to(device=str(device))
        self.flatten_parameters()

    # ------------------------------------------------------------ parameters

    def __getattr__(self, name):
        params = self.__dict__.get("_parameters")
        if params is not None and name in params:
            return params[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if params is not None and name in params:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(backplane.Tensor or None expected)")
            params[name] = value
            return
        object.__setattr__(self, name, value)

    @property
    def _flat_weights(self):
        """The parameters in ``_flat_weights_names`` order (what forward packs)."""
        return [self._parameters.get(n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[self._parameters[n] for n in names] for names in self._all_weights]

    def named_parameters(self):
        return iter(list(self._parameters.items()))

    def parameters(self):
        return iter(list(self._parameters.values()))

    def _config(self):
        return dict(mode=self.mode, input_size=self.input_size, hidden_size=self.hidden_size,
                    num_layers=self.num_layers, proj_size=self.proj_size, bias=self.bias,
                    bidirectional=self.bidirectional)

    def _is_packed(self):
        weights = self._flat_weights
        return (self._flat_pointers is not None and all(w is not None for w in weights)
                and [w.data_ptr() for w in weights] == self._flat_pointers)

    def flatten_parameters(self):
        """Packs every weight into one buffer in the layout of its device's implementations (Note
        [flatten_parameters]); a no-op when already packed, or (as PyTorch) when the weights are not all
        tensors of one dtype and device, a CUDA device cuDNN does not accept, or two weights share memory."""
        weights = self._flat_weights
        if any(w is None for w in weights) or self._is_packed():
            return
        first = weights[0]
        if any(w.dtype != first.dtype or w.device != first.device for w in weights):
            return
        from ..backends import cudnn

        if first.device != "cpu" and not cudnn.is_acceptable(first):
            return
        pointers = [w.data_ptr() for w in weights]
        if len(set(pointers)) != len(pointers):
            return
        packed = _native().pack_weights(*weights, **self._config())
        self._flat_buffer = packed[0]
        for name, view in zip(self._flat_weights_names, packed[1:]):
            self._parameters[name] = view
        self._flat_pointers = [v.data_ptr() for v in packed[1:]]

    def _weight_buffer(self):
        """The packed buffer, or (weights not packed) a temporary one, warning once per module."""
        if self._is_packed():
            return self._flat_buffer
        if not self._warned_not_packed:
            self._warned_not_packed = True
            warnings.warn(_NOT_CONTIGUOUS, UserWarning, stacklevel=3)
        return _native().pack_weights(*self._flat_weights, **self._config())[0]

    # ------------------------------------------------------------ modes, devices, state

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def to(self, *args, dtype=None, device=None):
        """Converts every parameter (a dtype name / NumPy dtype, a device 'cpu' / 'cuda:N', or both) and repacks."""
        for a in args:
            text = str(a)
            if text == "cpu" or text.startswith("cuda"):
                device = text
            else:
                dtype = a
        dtype = _np_dtype_name(dtype)
        for name in self._flat_weights_names:
            self._parameters[name] = self._parameters[name].to(dtype=dtype, device=device)
        self._flat_pointers = None
        self._flat_buffer = None
        self.flatten_parameters()
        return self

    def float(self):
        return self.to(dtype="float32")

    def double(self):
        return self.to(dtype="float64")

    def half(self):
        return self.to(dtype="float16")

    def bfloat16(self):
        return self.to(dtype="bfloat16")

    def cpu(self):
        return self.to(device="cpu")

    def cuda(self, device=None):
        return self.to(device="cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    def state_dict(self):
        """PyTorch's keys, NumPy arrays (sharing the parameters' memory on the CPU)."""
        out = OrderedDict()
        for name, t in self._parameters.items():
            out[name] = np.asarray(t if t.device == "cpu" else t.to(device="cpu"))
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Loads arrays / Tensors / DLPack tensors under PyTorch's keys, converted to the module's dtype and device,
        and repacks. RuntimeError as PyTorch's for missing or unexpected keys (strict) and for shape mismatches."""
        missing = [k for k in self._flat_weights_names if k not in state_dict]
        unexpected = [k for k in state_dict if k not in self._parameters]
        errors = []
        if strict:
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        loaded = {}
        for name in self._flat_weights_names:
            if name not in state_dict:
                continue
            value = state_dict[name]
            if not isinstance(value, Tensor):
                value = asarray(value.detach().cpu() if hasattr(value, "detach") else value)
            current = self._parameters[name]
            if tuple(value.shape) != tuple(current.shape):
                errors.append(f"size mismatch for {name}: copying a param with shape {list(value.shape)} from "
                              f"checkpoint, the shape in current model is {list(current.shape)}.")
                continue
            loaded[name] = value.to(dtype=current.dtype, device=current.device)
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        for name, value in loaded.items():
            self._parameters[name] = value
        self._flat_pointers = None
        self.flatten_parameters()
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------ forward

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def __repr__(self):
        return f"{type(self).__name__}({self.extra_repr()})"

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def _dim_error(self, dim):
        raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {dim}D instead")

    def _prepare(self, input, hx):
        """The op call's (args, kwargs) and, for a PackedSequence, the sequence (or None)."""
        lstm = self.mode == "LSTM"
        weights = self._flat_weights
        packed = input if isinstance(input, PackedSequence) else None
        lengths = ()
        if packed is not None:
            padded, lens, device = _padded_of(input)
            x = asarray(padded) if device == "cpu" else asarray(padded).to(device=device)
            lengths = tuple(int(n) for n in lens)
            batch_first = False
            if hx is not None and input.sorted_indices is not None:
                hx = _permute_hidden(hx, input.sorted_indices, lstm)
        else:
            x = input if isinstance(input, Tensor) else asarray(input)
            if x.ndim not in (2, 3):
                self._dim_error(x.ndim)
            batch_first = self.batch_first
        if x.dtype != weights[0].dtype:
            raise ValueError(f"RNN input dtype ({x.dtype}) does not match weight dtype ({weights[0].dtype}). Convert "
                             f"input: input.to({weights[0].dtype}), or convert model: model.to({x.dtype})")
        h0 = c0 = None
        if hx is not None:
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise TypeError("LSTM: hx must be a tuple (h_0, c_0)")
                h0, c0 = hx
            else:
                h0 = hx
        kwargs = dict(batch_first=batch_first, dropout=self.dropout, train=self.training, lengths=lengths,
                      **self._config())
        return (x, self._weight_buffer(), h0, c0), kwargs, packed

    def _op_call(self, input, hx=None):
        """(entry, args, kwargs) of the op call this forward makes: what explain("rnn", module, input) judges."""
        args, kwargs, _ = self._prepare(input, hx)
        return "rnn", args, kwargs

    def forward(self, input, hx=None):
        lstm = self.mode == "LSTM"
        args, kwargs, packed = self._prepare(input, hx)
        result = _native().rnn(*args, **kwargs)
        output, hn = result[0], result[1]
        state = (hn, result[2]) if lstm else hn
        if packed is not None:
            output = _repack(output, packed.batch_sizes)
            output = PackedSequence(output, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
            if packed.unsorted_indices is not None:
                state = _permute_hidden(state, packed.unsorted_indices, lstm)
        return output, state


def _select_batch(t, index):
    """t[:, index] for a state [L * D, B, H] (host round trip for CUDA tensors)."""
    arr = np.asarray(t if t.device == "cpu" else t.to(device="cpu"))
    idx = np.asarray(index).astype(np.int64)
    out = asarray(np.ascontiguousarray(arr[:, idx]))
    return out if t.device == "cpu" else out.to(device=t.device)


def _permute_hidden(hx, permutation, lstm):
    if lstm:
        return (_select_batch(hx[0], permutation), _select_batch(hx[1], permutation))
    return _select_batch(hx, permutation)


def _repack(output, batch_sizes):
    """The packed rows of a time-major padded output."""
    arr = np.asarray(output if output.device == "cpu" else output.to(device="cpu"))
    sizes = np.asarray(batch_sizes)
    data = np.concatenate([arr[t, :int(n)] for t, n in enumerate(sizes)], axis=0)
    out = asarray(np.ascontiguousarray(data))
    return out if output.device == "cpu" else out.to(device=output.device)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (or relu), as torch.nn.RNN.

    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            object.__setattr__(self, "nonlinearity", args[3])
            args = args[:3] + args[4:]
        else:
            object.__setattr__(self, "nonlinearity", kwargs.pop("nonlinearity", "tanh"))
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def _dim_error(self, dim):
        raise ValueError(f"RNN: Expected input to be 2D or 3D, got {dim}D tensor instead")

    def extra_repr(self):
        s = super().extra_repr()
        return s + (f", nonlinearity={self.nonlinearity}" if self.nonlinearity != "tanh" else "")


class LSTM(RNNBase):
    """Long short-term memory, with an optional projection of h (proj_size), as torch.nn.LSTM.

    LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False,
    proj_size=0, device=None, dtype=None); forward(input, (h_0, c_0)=None) -> output, (h_n, c_n).
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def _dim_error(self, dim):
        raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {dim}D instead")


class GRU(RNNBase):
    """Gated recurrent unit, as torch.nn.GRU: r, z, n gates; n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).

    GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False,
    device=None, dtype=None)
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def _dim_error(self, dim):
        raise ValueError(f"GRU: Expected input to be 2D or 3D, got {dim}D instead")
