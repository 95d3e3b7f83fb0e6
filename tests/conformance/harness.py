"""Runs one behaviour on PyTorch and on Backplane and compares what happened.

Each behaviour is a function of a *side*: an object giving the same names
on both libraries (``S.backends``, ``S.top``, ``S.attention``, ``S.F``,
``S.tensor(ndarray)``). It runs in a forked child of this process, so every
behaviour starts from the state the suite started in (PyTorch's flag state
cannot be fully reset in-process: a precision node once set never reads its
default again) and a frozen or half-applied state never leaks.

What a behaviour returns is turned into plain data: enums into their names,
tensors into NumPy arrays, dtypes into names. An exception, wherever it is
caught (``attempt``) or if it escapes, becomes ``Raised``: the builtin
classes of its MRO. Backplane conforms when it raises something catchable as
the most specific builtin class PyTorch raised (so ``except RuntimeError``
written for PyTorch works) and returns equal values everywhere else.
"""

import dataclasses
import enum
import os
import pickle
import sys
import warnings

import numpy as np

# PyTorch errors that say this machine cannot answer (no NVIDIA driver),
# not how PyTorch behaves: such a behaviour is not compared.
_PEER_CANNOT_ANSWER = ("Found no NVIDIA driver", "CUDA driver version is insufficient",
                       "No CUDA GPUs are available", "Torch not compiled with CUDA")


@dataclasses.dataclass(frozen=True)
class Raised:
    """An exception, as the builtin classes it can be caught as."""
    builtins: tuple  # most specific first
    message: str

    @property
    def catch_as(self):
        return self.builtins[0]

    def __repr__(self):
        return f"Raised({self.builtins[0]}: {self.message[:160]!r})"


@dataclasses.dataclass(frozen=True)
class Warned:
    """The categories of the Python warnings a call emitted, and its result."""
    categories: tuple
    result: object


def raised(exc):
    names = tuple(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins" and c is not object)
    return Raised(names, str(exc))


def attempt(fn, *args, **kwargs):
    """Calls fn; returns its result or, if it raises, the Raised record (the behaviour goes on)."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 (every class is data here)
        return raised(exc)


def warned(fn, *args, **kwargs):
    """Calls fn recording Python warnings: Warned(categories, result or Raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = attempt(fn, *args, **kwargs)
    return Warned(tuple(sorted({w.category.__name__ for w in caught})), result)


def plain(value):
    """Plain, picklable, comparable data from what a behaviour returned."""
    if isinstance(value, (Raised, type(None), bool, int, float, str)):
        return value
    if isinstance(value, Warned):
        return Warned(value.categories, plain(value.result))
    if isinstance(value, enum.Enum) or (hasattr(value, "name") and type(value).__module__.startswith("torch._C")):
        return ("enum", value.name)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return ("set", sorted(str(plain(v)) for v in value))
    module = type(value).__module__
    if module == "torch" and type(value).__name__ == "dtype":
        return str(value).replace("torch.", "")
    if module.startswith("torch") and type(value).__name__ in ("Tensor", "Parameter"):
        value = value.detach().cpu().resolve_conj().resolve_neg()
        # NumPy has no bf16: such results compare as fp32, with the half-precision tolerance.
        return np.asarray(value.float().numpy() if value.dtype.is_floating_point and value.dtype.itemsize < 4
                          else value.numpy())
    if hasattr(value, "__array__") or isinstance(value, np.ndarray):
        return np.asarray(value)
    if isinstance(value, np.generic):
        return value.item()
    return ("object", type(value).__name__)


def run_forked(fn, side):
    """fn(side) in a forked child: plain(result) or Raised."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send, leave without cleanup handlers
        os.close(read_end)
        try:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = plain(fn(side))
            except Exception as exc:  # noqa: BLE001
                out = raised(exc)
            data = pickle.dumps(out)
        except BaseException as exc:  # noqa: BLE001 (anything unpicklable)
            data = pickle.dumps(Raised(("HarnessError",), repr(exc)))
        with os.fdopen(write_end, "wb") as f:
            f.write(data)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        return Raised(("HarnessError",), f"child died with status {status}")
    return pickle.loads(data)


def peer_cannot_answer(value):
    """Whether PyTorch's result only says this machine lacks a GPU driver."""
    if isinstance(value, Raised):
        return any(text in value.message for text in _PEER_CANNOT_ANSWER)
    if isinstance(value, Warned):
        return peer_cannot_answer(value.result)
    if isinstance(value, dict):
        return any(peer_cannot_answer(v) for v in value.values())
    if isinstance(value, list):
        return any(peer_cannot_answer(v) for v in value)
    return False


def _short(value):
    text = f"array of shape {value.shape}" if isinstance(value, np.ndarray) else repr(value)
    return text if len(text) <= 300 else text[:300] + "..."


def differences(torch_value, ours, path="result"):
    """Where Backplane's result does not conform to PyTorch's: a list of lines (empty = conforms)."""
    if isinstance(torch_value, Raised):
        if not isinstance(ours, Raised):
            return [f"{path}: PyTorch raised {torch_value!r}, Backplane gave {_short(ours)}"]
        if torch_value.catch_as not in ours.builtins:
            return [f"{path}: PyTorch raised {torch_value!r}; Backplane's {ours!r} is not catchable as "
                    f"{torch_value.catch_as}"]
        return []
    if isinstance(ours, Raised):
        return [f"{path}: PyTorch gave {_short(torch_value)}, Backplane raised {ours!r}"]
    if isinstance(torch_value, Warned) and isinstance(ours, Warned):
        out = differences(torch_value.result, ours.result, path)
        if torch_value.categories != ours.categories:
            out.append(f"{path}: PyTorch warned {torch_value.categories}, Backplane {ours.categories}")
        return out
    if isinstance(torch_value, np.ndarray) or isinstance(ours, np.ndarray):
        a, b = np.asarray(torch_value), np.asarray(ours)
        if a.shape != b.shape:
            return [f"{path}: shape {a.shape} != {b.shape}"]
        if a.dtype != b.dtype and not (a.dtype.itemsize <= 2 or b.dtype.itemsize <= 2):
            return [f"{path}: dtype {a.dtype} != {b.dtype}"]
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            tol = 2e-2 if min(a.dtype.itemsize, b.dtype.itemsize) <= 2 else 1e-5
            wide = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
            if not np.allclose(a.astype(wide), b.astype(wide), rtol=tol, atol=tol, equal_nan=True):
                return [f"{path}: values differ (max |diff| {np.max(np.abs(a - b))})"]
            return []
        return [] if np.array_equal(a, b) else [f"{path}: values differ"]
    if isinstance(torch_value, dict) and isinstance(ours, dict):
        if torch_value.keys() != ours.keys():
            return [f"{path}: keys {sorted(torch_value)} != {sorted(ours)}"]
        return [line for k in torch_value for line in differences(torch_value[k], ours[k], f"{path}[{k!r}]")]
    if isinstance(torch_value, list) and isinstance(ours, list) and len(torch_value) == len(ours):
        return [line for i, (a, b) in enumerate(zip(torch_value, ours))
                for line in differences(a, b, f"{path}[{i}]")]
    same = type(torch_value) is type(ours) and torch_value == ours
    if isinstance(torch_value, float) and isinstance(ours, float):
        same = abs(torch_value - ours) <= 1e-6 * max(1.0, abs(torch_value))
    return [] if same else [f"{path}: PyTorch {_short(torch_value)} != Backplane {_short(ours)}"]
