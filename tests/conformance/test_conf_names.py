"""Every public name of every torch.backends module, of torch.nn.attention and
of the top-level functions Backplane mirrors: it exists in Backplane, is a
callable where PyTorch's is (and a value where PyTorch's is a value), and a
Python function takes PyTorch's parameter names, kinds and defaults."""

import importlib
import inspect
import pkgutil
import types

import pytest

from conftest import TALLY, check_known, torch

MODULES = ["", "cpu", "cuda", "cudnn", "cudnn.rnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn",
           "mps", "nnpack", "openmp", "opt_einsum", "python_native", "xeon"]

# Top-level names Backplane mirrors: (PyTorch module, Backplane module, names).
TOP_LEVEL = [
    ("torch", "backplane", ["set_float32_matmul_precision", "get_float32_matmul_precision",
                            "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
                            "is_deterministic_algorithms_warn_only_enabled", "set_num_threads", "get_num_threads",
                            "manual_seed", "initial_seed", "matmul", "addmm", "einsum", "from_dlpack", "asarray",
                            "Tensor"]),
    ("torch.nn.functional", "backplane.nn.functional", ["scaled_dot_product_attention", "linear"]),
    ("torch.cuda", "backplane.cuda", ["is_available", "device_count", "get_device_name",
                                      "get_device_capability"]),
]

_NOT_API = {"TYPE_CHECKING"}  # typing's constant, imported


def _module_names(module, full_name):
    """The public names of a torch.backends module: its own functions, classes, flags and constants."""
    inner = getattr(module, "m", None)  # PyTorch's PropModule keeps the original module as .m
    namespace = dict(vars(inner)) if isinstance(inner, types.ModuleType) else dict(vars(module))
    names = {n for n, v in vars(type(module)).items() if not n.startswith("_") and not callable(v)
             and type(module) is not types.ModuleType}  # the class-level flag properties
    for name, value in namespace.items():
        if name.startswith("_") or name in _NOT_API:
            continue
        if isinstance(value, types.ModuleType):
            if value.__name__ == f"{full_name}.{name}":
                names.add(name)
            continue
        if type(value).__module__ == "typing":
            continue  # typing's special forms (Optional, Union), imported
        origin = getattr(value, "__module__", None)
        if (inspect.isclass(value) or inspect.isfunction(value) or inspect.isbuiltin(value)) and origin:
            if not origin.startswith("torch"):
                continue  # imported helpers (typing, contextlib, ...)
            if origin == "torch.backends" and full_name != "torch.backends":
                continue  # the package's own machinery, imported into a submodule
        names.add(name)
    if full_name == "torch.backends":  # submodules not imported by default
        for info in pkgutil.iter_modules(module.__path__ if hasattr(module, "__path__") else inner.__path__):
            if not info.name.startswith("_"):
                names.add(info.name)
    return names


def _pairs():
    out = []
    for mod in MODULES:
        full = "torch.backends" + (f".{mod}" if mod else "")
        tmod = importlib.import_module(full)
        ours = "backplane.backends" + (f".{mod}" if mod else "")
        for name in sorted(_module_names(tmod, full)):
            out.append((full, ours, name))
    tattn = importlib.import_module("torch.nn.attention")
    for name in sorted(_module_names(tattn, "torch.nn.attention") | {"can_use_flash_attention",
                                                                      "can_use_efficient_attention"}):
        if name not in ("Union", "Iterable", "ContextVar", "contextlib", "torch", "warn"):
            out.append(("torch.nn.attention", "backplane.nn.attention", name))
    for tmod, omod, names in TOP_LEVEL:
        out.extend((tmod, omod, n) for n in names)
    return out


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _signature_differences(tfn, ofn):
    tsig, osig = _signature(tfn), _signature(ofn)
    if tsig is None or not inspect.isfunction(tfn):
        return []  # a C function without a Python signature: names only
    if osig is None:
        return [f"PyTorch's signature {tsig}, Backplane's cannot be read"]
    tparams, oparams = list(tsig.parameters.values()), list(osig.parameters.values())
    out = []
    for i, tp in enumerate(tparams):
        if i >= len(oparams):
            out.append(f"parameter {tp.name!r} missing (PyTorch {tsig}, Backplane {osig})")
            break
        op = oparams[i]
        if (tp.name, tp.kind) != (op.name, op.kind):
            out.append(f"parameter {i}: PyTorch {tp} ({tp.kind.description}), Backplane {op} ({op.kind.description})")
        elif tp.default is not inspect.Parameter.empty and tp.default != op.default:
            out.append(f"parameter {tp.name!r}: PyTorch default {tp.default!r}, Backplane {op.default!r}")
    for op in oparams[len(tparams):]:
        if op.default is inspect.Parameter.empty and op.kind not in (op.VAR_POSITIONAL, op.VAR_KEYWORD):
            out.append(f"Backplane requires the extra parameter {op.name!r}")
    return out


def _get(module_name, name):
    module = importlib.import_module(module_name)
    return getattr(module, name)


@pytest.mark.parametrize("tmod,omod,name", _pairs(), ids=lambda x: x if isinstance(x, str) else None)
def test_name(tmod, omod, name):
    case_id = f"name:{tmod}.{name}"
    TALLY["names"] += 1
    try:
        tval = _get(tmod, name)
    except Exception as exc:  # noqa: BLE001 (a PyTorch name that needs a GPU driver to read)
        tval = exc
    diffs = []
    try:
        oval = _get(omod, name)
    except AttributeError as exc:
        check_known(case_id, [f"{omod}.{name} does not exist ({exc})"])
        return
    if isinstance(tval, Exception):
        pass  # exists on both; nothing more PyTorch can tell here
    elif isinstance(tval, types.ModuleType):
        if not isinstance(oval, types.ModuleType):
            diffs.append(f"PyTorch's is a module, Backplane's a {type(oval).__name__}")
    elif callable(tval) != callable(oval):
        diffs.append(f"PyTorch's is {'a callable' if callable(tval) else 'a value'}, Backplane's is not")
    elif callable(tval) and not inspect.isclass(tval):
        diffs.extend(_signature_differences(tval, oval))
    check_known(case_id, diffs)


def test_known_name_entries_name_real_pytorch_names():
    """A known difference about a name names one that PyTorch has."""
    names = {f"name:{t}.{n}" for t, _, n in _pairs()}
    from known_differences import KNOWN
    stale = [k for k in KNOWN if k.startswith("name:") and k not in names]
    assert not stale, f"known differences about names PyTorch {torch.__version__} does not have: {stale}"
