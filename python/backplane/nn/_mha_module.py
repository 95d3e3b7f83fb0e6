"""A small ``torch.nn.Module`` look-alike for the attention modules: parameters, train/eval, state_dict.

Parameters are NumPy arrays owned by the module (float32 unless ``dtype`` says
float64), registered under PyTorch's names, so ``state_dict()`` has PyTorch's
keys and ``load_state_dict`` takes a PyTorch ``state_dict()`` unchanged (torch
tensors, NumPy arrays or ``backplane.Tensor``). Forward only: there is no
autograd, so "requires grad" never blocks the fast path.
"""

import collections
import copy

import numpy as np

from .. import _C

__all__ = ["Module"]

_IncompatibleKeys = collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])

_rng_state = {"rng": None, "seed": None}


def _rng():
    """The generator behind parameter initialisation, reseeded when backplane.manual_seed changes the seed."""
    seed = _C.initial_seed()
    if _rng_state["seed"] != seed:
        _rng_state["rng"], _rng_state["seed"] = np.random.default_rng(seed), seed
    return _rng_state["rng"]


def _dtype_of(dtype):
    """float32 (default) or float64; a clear error for anything else."""
    if dtype is None:
        return np.dtype(np.float32)
    try:
        name = np.dtype(dtype).name
    except TypeError:  # torch.float32 and the like
        name = str(dtype).replace("torch.", "")
    if name in ("float32", "float", "f32"):
        return np.dtype(np.float32)
    if name in ("float64", "double", "f64"):
        return np.dtype(np.float64)
    raise _C.BackplaneValueError(f"dtype: expected float32 or float64 for the module's parameters, got {dtype!r}")


def _check_device(device):
    if device is not None and str(device) != "cpu":
        raise _C.BackplaneValueError(f"device: expected 'cpu' (the modules' parameters live in host memory), got {device!r}")


def _forward_only(name, module, p):
    """NotImplementedError for a dropout > 0 in training mode: the modules never drop silently."""
    if module.training and p > 0:
        raise NotImplementedError(f"{name}: dropout {p} in training mode (Backplane's modules are forward-only: "
                                  "call eval(), or use dropout=0.0)")


def _as_numpy(value):
    """A NumPy view (or copy) of a checkpoint value: NumPy array, backplane.Tensor, torch tensor, nested lists."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor, possibly requiring grad
        value = value.detach().cpu().numpy()
    elif isinstance(value, _C.Tensor):
        value = value.numpy()
    return np.asarray(value)


class Module:
    """Parameters (NumPy arrays or None) and submodules by name, in registration order, as torch.nn.Module."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    # ---- attributes
    def register_parameter(self, name, value):
        self._parameters[name] = value

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        elif name in self._parameters:
            self._parameters[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if name in d.get("_parameters", {}):
            return d["_parameters"][name]
        if name in d.get("_modules", {}):
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __deepcopy__(self, memo):
        new = object.__new__(type(self))
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            object.__setattr__(new, k, copy.deepcopy(v, memo))
        return new

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- modes
    def train(self, mode=True):
        """Training mode for this module and every submodule; returns self (ValueError for a non-bool)."""
        if not isinstance(mode, bool):
            raise _C.BackplaneValueError(f"training mode is expected to be boolean, got {mode!r}")
        object.__setattr__(self, "training", mode)
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    # ---- traversal
    def named_modules(self, prefix=""):
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        return (m for _, m in self.named_modules())

    def children(self):
        return iter(self._modules.values())

    def named_parameters(self, prefix=""):
        for name, m in self.named_modules(prefix):
            for pname, p in m._parameters.items():
                if p is not None:
                    yield (f"{name}.{pname}" if name else pname), p

    def parameters(self):
        return (p for _, p in self.named_parameters())

    # ---- checkpoints
    def state_dict(self):
        """An ordered dict of PyTorch's keys to the parameters themselves (NumPy arrays, not copies)."""
        return collections.OrderedDict(self.named_parameters())

    def load_state_dict(self, state_dict, strict=True):
        """Copies each value into the parameter of its key (torch tensors, NumPy arrays, backplane.Tensor).

        Every key and shape is checked before anything is copied, so a failed load changes nothing.
        strict: missing or unexpected keys raise RuntimeError (listing them, as PyTorch); otherwise they
        are returned as (missing_keys, unexpected_keys).
        """
        own = dict(self.named_parameters())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors, staged = [], []
        for key, param in own.items():
            if key not in state_dict:
                continue
            value = _as_numpy(state_dict[key])
            if value.shape != param.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} from "
                              f"checkpoint, the shape in current model is {tuple(param.shape)}.")
            elif not (np.issubdtype(value.dtype, np.floating) or np.issubdtype(value.dtype, np.integer)):
                errors.append(f"dtype of {key}: expected a real number dtype, got {value.dtype}")
            else:
                staged.append((param, value))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        for param, value in staged:
            param[...] = value
        return _IncompatibleKeys(missing, unexpected)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, m in self._modules.items():
            lines.append(f"  ({name}): " + repr(m).replace("\n", "\n  "))
        return "\n".join(lines) + (")" if len(lines) == 1 else "\n)")


class Linear(Module):
    """The parameter holder of torch.nn.Linear (weight [out, in], bias [out]) with its initialisation."""

    def __init__(self, in_features, out_features, bias=True, dtype=None, init=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / np.sqrt(in_features) if in_features > 0 else 0.0
        dt = _dtype_of(dtype)
        self.register_parameter("weight", _rng().uniform(-bound, bound, (out_features, in_features)).astype(dt))
        self.register_parameter("bias", _rng().uniform(-bound, bound, (out_features,)).astype(dt) if bias else None)

    def forward(self, x):
        from .. import linear
        return linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class LayerNorm(Module):
    """The parameter holder of torch.nn.LayerNorm over the last dim (weight ones, bias zeros)."""

    def __init__(self, normalized_shape, eps=1e-5, bias=True, dtype=None):
        super().__init__()
        self.normalized_shape, self.eps = (normalized_shape,), eps
        dt = _dtype_of(dtype)
        self.register_parameter("weight", np.ones(normalized_shape, dt))
        self.register_parameter("bias", np.zeros(normalized_shape, dt) if bias else None)

    def forward(self, x):
        x = np.asarray(_as_numpy(x))
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        y = (x - mean) / np.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y.astype(x.dtype)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"
