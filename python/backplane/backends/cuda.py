"""backplane.backends.cuda: cuBLAS/cuBLASLt math modes and library choice,
workspaces, the cuFFT plan cache and the scaled-dot-product-attention knobs.

Every value lives in the C++ flag table (Note [Python flag properties]).
"""

import enum
import warnings

from .. import _C, _errors
from . import _props
from ..nn.attention import SDPBackend, SDPAParams, sdpa_kernel

__all__ = [
    "is_built", "matmul", "cufft_plan_cache", "preferred_blas_library", "preferred_linalg_library",
    "preferred_rocm_fa_library", "is_ck_sdpa_available", "cublas_workspace_size", "cublaslt_workspace_size",
    "blas_workspace_size", "SDPAParams", "SDPBackend", "flash_sdp_enabled", "enable_flash_sdp",
    "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp",
    "cudnn_sdp_enabled", "enable_cudnn_sdp", "fp16_bf16_reduction_math_sdp_allowed",
    "allow_fp16_bf16_reduction_math_sdp", "is_flash_attention_available", "can_use_flash_attention",
    "can_use_efficient_attention", "can_use_cudnn_attention", "sdp_kernel",
    "cuBLASModule", "cuFFTPlanCache", "cuFFTPlanCacheAttrContextProp", "cuFFTPlanCacheManager",
]


def is_built():
    """Whether this Backplane was built with CUDA (says nothing about drivers or devices)."""
    return _C.cuda_is_built()


# ---------------------------------------------------------------- cuda.matmul

def _reduced_precision_property(dtype):
    """allow_<dtype>_reduced_precision_reduction: a bool, or an (allow_reduced, allow_splitk) pair.

    Three legal states (spec 4.2): (True, True), (False, True), (False, False);
    (True, False) is refused. The getter answers the first element.
    """
    attr = f"allow_{dtype}_reduced_precision_reduction"
    path = f"cuda.matmul.{attr}"
    full = f"backplane.backends.cuda.matmul.{attr}"

    def get(self):
        return _C.flag_get(path) == "allowed"

    def set_(self, value):
        if isinstance(value, bool):
            pair = (value, True)
        elif isinstance(value, (tuple, list)):
            if len(value) == 0:
                raise _errors.bad_type(full, value, "at least one boolean argument")
            if len(value) > 2:
                raise _errors.bad_type(full, value, "at most two boolean arguments")
            for what, v in zip(("allow_reduced_precision", "allow_splitk"), value):
                if not isinstance(v, bool):
                    raise _errors.bad_type(full, v, f"a bool for {what}")
            pair = (value[0], value[1] if len(value) == 2 else True)
        else:
            raise _errors.bad_type(full, value, "a bool or a tuple/list of bools")
        states = {(True, True): "allowed", (False, True): "no_reduced", (False, False): "no_reduced_no_splitk"}
        if pair not in states:
            raise _errors.runtime(full, f"{full}: allow_splitk=False is not supported when reduced precision "
                                  "reductions are enabled; use (False, False)")
        _C.flag_set(path, states[pair])

    split_k = property(lambda self: _C.flag_get(path) != "no_reduced_no_splitk",
                       doc=f"Whether split-K may be used for {dtype} GEMMs (read-only).")
    return {attr: property(get, set_, doc=f"{dtype} GEMM reduced-precision reduction"),
            attr + "_split_k": split_k}


def _allow_tf32_get(self):
    return _C.cuda_matmul_allow_tf32()


def _allow_tf32_set(self, value):
    _C.set_cuda_matmul_allow_tf32(value)


matmul = _props.property_object("cuda.matmul", {
    "allow_tf32": property(_allow_tf32_get, _allow_tf32_set,
                           doc="fp32 GEMMs may use TF32 (a view of cuda.matmul.fp32_precision)"),
    **_reduced_precision_property("fp16"),
    **_reduced_precision_property("bf16"),
}, class_name="cuBLASModule")

# The class of ``matmul``, under PyTorch's name; it holds no state, so more instances see the same flags.
cuBLASModule = type(matmul)


# ---------------------------------------------------------------- cuFFT plan cache

_CUFFT_SIZE_READ_ONLY = (".size is a read-only property showing the number of plans currently in the cache. To "
                         "change the cache capacity, set cufft_plan_cache.max_size.")


class cuFFTPlanCacheAttrContextProp:
    """An attribute of a device's cuFFT plan cache: ``getter(device_index)`` reads it and
    ``setter(device_index, value)`` writes it; a string setter is the error a write raises."""

    def __init__(self, getter, setter):
        self.getter = getter
        self.setter = setter

    def __get__(self, obj, objtype):
        return self if obj is None else self.getter(obj.device_index)

    def __set__(self, obj, val):
        if isinstance(self.setter, str):
            raise _errors.runtime("cufft_plan_cache", self.setter)
        self.setter(obj.device_index, val)


class cuFFTPlanCache:
    """The cuFFT plan cache of one CUDA device: ``size`` (read-only), ``max_size``, ``clear()``.

    Also Backplane's ``hits`` and ``misses``. Every value lives in C++ (one cache per device).
    """

    def __init__(self, device_index):
        self.device_index = device_index

    size = cuFFTPlanCacheAttrContextProp(lambda i: _C.cufft_plan_cache(i).size, _CUFFT_SIZE_READ_ONLY)
    max_size = cuFFTPlanCacheAttrContextProp(lambda i: _C.cufft_plan_cache(i).max_size,
                                             lambda i, v: setattr(_C.cufft_plan_cache(i), "max_size", v))
    hits = property(lambda self: _C.cufft_plan_cache(self.device_index).hits, doc="Lookups that found a plan")
    misses = property(lambda self: _C.cufft_plan_cache(self.device_index).misses, doc="Lookups that made one")

    def clear(self):
        """Drops every cached plan of this device."""
        _C.cufft_plan_cache(self.device_index).clear()

    def __repr__(self):
        return f"<cuFFTPlanCache of cuda:{self.device_index}>"


def _plan_cache_index(device):
    """The device index of ``cufft_plan_cache[device]``: an int, "cuda:N", or a device object with an index.

    A device without an index ("cuda") is refused, as PyTorch refuses it: the
    cache of one device is meant, so the device must be named.
    """
    subject = "backplane.backends.cuda.cufft_plan_cache"
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    kind, index = None, None
    if isinstance(device, str):
        kind, _, text = device.partition(":")
        index = int(text) if text.isdigit() else None
        if text and index is None:
            kind = None
    elif hasattr(device, "type") and hasattr(device, "index"):  # torch.device and the like
        kind, index = str(device.type), device.index
    if kind is not None and kind != "cuda":
        raise _errors.bad_value(subject, device, "a CUDA device", message=f"Expected a cuda device, but got: {device}")
    if index is None:
        raise _errors.bad_value(subject, device, "a device index (int) or a CUDA device with an index (\"cuda:0\")",
                                message="Expected a torch.device with a specified index or an integer, but got:"
                                        f"{device} (name the device: cufft_plan_cache[0] or [\"cuda:0\"])")
    return index


class cuFFTPlanCacheManager:
    """``cufft_plan_cache[i]`` is device i's cache; attributes of the manager
    itself (``size``, ``max_size``, ``clear()``) act on the current device (0)."""

    __initialized = False

    def __init__(self):
        self.caches = {}
        self.__initialized = True

    def __getitem__(self, device):
        index = _plan_cache_index(device)
        _C.cufft_plan_cache(index)  # raises for an index outside the devices
        return self.caches.setdefault(index, cuFFTPlanCache(index))

    def __getattr__(self, name):
        return getattr(self[0], name)

    def __setattr__(self, name, value):
        if self.__initialized:
            return setattr(self[0], name, value)
        return super().__setattr__(name, value)


cufft_plan_cache = cuFFTPlanCacheManager()


# ---------------------------------------------------------------- library preferences

class _BlasBackend(enum.Enum):
    Default = "default"
    Cublas = "cublas"
    Cublaslt = "cublaslt"
    Ck = "ck"


class _LinalgBackend(enum.Enum):
    Default = "default"
    Cusolver = "cusolver"
    Magma = "magma"


class _ROCmFABackend(enum.Enum):
    Default = "default"
    AOTriton = "aotriton"
    Ck = "ck"


# Accepted strings (aliases included) -> the canonical value stored in the flag.
_BLAS_STRINGS = {"default": "default", "cublas": "cublas", "hipblas": "cublas", "cublaslt": "cublaslt",
                 "hipblaslt": "cublaslt", "ck": "ck"}
_LINALG_STRINGS = {"default": "default", "cusolver": "cusolver", "magma": "magma"}
_ROCM_FA_STRINGS = {"default": "default", "aotriton": "aotriton", "ck": "ck"}


def _experimental_warning(name):
    warnings.warn(f"backplane.backends.cuda.{name} is an experimental feature. If you see any error or unexpected "
                  "behavior when this flag is set please file an issue.", stacklevel=3)


def _choice(subject, backend, enum_cls, strings, what="input value", type_error=None):
    """The canonical string of a library preference given as a string or an enum member.

    An unknown string is a ValueError, another type a TypeError (both also
    RuntimeErrors, as PyTorch raises them), except where noted
    (``type_error``: PyTorch's preferred_rocm_fa_library raises ValueError).
    """
    choices = ", ".join(strings)
    if isinstance(backend, enum_cls):
        return backend.value
    if isinstance(backend, str):
        if backend not in strings:
            raise _errors.bad_value(subject, backend, choices,
                                    message=f"Unknown {what} '{backend}'. Choose from: {choices}.")
        return strings[backend]
    allowed = f"a str ({choices}) or a {enum_cls.__name__}"
    if type_error is not None:
        raise type_error(subject, backend, allowed)
    raise _errors.bad_type(subject, backend, allowed)


def preferred_blas_library(backend=None):
    """GEMM library on CUDA: cuBLAS or cuBLASLt ("default" resolves to cuBLAS on NVIDIA GPUs).

    With ``backend`` (a string or ``_BlasBackend``) sets the preference; returns the current one.
    """
    if backend is not None:
        choice = _choice("backplane.backends.cuda.preferred_blas_library", backend, _BlasBackend, _BLAS_STRINGS)
        if choice == "cublaslt" and not _C.built_with["cublaslt"]:
            raise _errors.runtime("backplane.backends.cuda.preferred_blas_library",
                                  "Cannot set preferred backend to cuBLASLt if Backplane has not been compiled "
                                  "with cuBLASLt.")
        # "ck" is stored and read back, as on PyTorch's CUDA builds; GEMM dispatch finds no CK
        # implementation here and keeps its default order (a preference reorders, never forces).
        _C.flag_set("cuda.preferred_blas_library", choice)
        if choice not in ("default", "cublas"):
            _experimental_warning("preferred_blas_library")
    value = _C.flag_get("cuda.preferred_blas_library")
    return _BlasBackend.Cublas if value == "default" else _BlasBackend(value)


def preferred_linalg_library(backend=None):
    """Linear-algebra library on CUDA: "default", "cusolver" or "magma".

    Validated before it is stored (PyTorch stores first; docs/differences.md).
    """
    if backend is not None:
        subject = "backplane.backends.cuda.preferred_linalg_library"
        choice = _choice(subject, backend, _LinalgBackend, _LINALG_STRINGS)
        if choice == "cusolver" and not _C.built_with["cusolver"]:
            raise _errors.runtime(subject, "Cannot set preferred backend to cuSOLVER if Backplane has not been "
                                  "compiled with cuSOLVER.")
        if choice == "magma":
            raise _errors.runtime(subject, "Cannot set preferred backend to MAGMA if Backplane has not been "
                                  "compiled with MAGMA.")
        _C.flag_set("cuda.preferred_linalg_library", choice)
        if choice != "default":
            _experimental_warning("preferred_linalg_library")
    return _LinalgBackend(_C.flag_get("cuda.preferred_linalg_library"))


def preferred_rocm_fa_library(backend=None):
    """ROCm flash-attention library ("default", "aotriton", "ck"): held as state on CUDA builds."""
    if backend is not None:
        # PyTorch raises ValueError (not RuntimeError) for a wrong type here.
        choice = _choice("backplane.backends.cuda.preferred_rocm_fa_library", backend, _ROCmFABackend,
                         _ROCM_FA_STRINGS, type_error=_errors.bad_value)
        _C.flag_set("cuda.preferred_rocm_fa_library", choice)
    return _ROCmFABackend(_C.flag_get("cuda.preferred_rocm_fa_library"))


def is_ck_sdpa_available():
    """Whether ROCm's Composable Kernel SDPA may be used: never on a CUDA build."""
    return False


# ---------------------------------------------------------------- workspaces

def _workspace(flag, size, effective):
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, int):
            raise _errors.bad_type(f"backplane.backends.cuda.{flag}", size, "an int number of bytes")
        _C.flag_set(f"cuda.{flag}", size)
    return effective()


def cublas_workspace_size(size=None):
    """cuBLAS workspace in bytes; with ``size`` sets it (overrides CUBLAS_WORKSPACE_CONFIG)."""
    return _workspace("cublas_workspace_size", size, _C.cublas_workspace_size)


def cublaslt_workspace_size(size=None):
    """cuBLASLt workspace in bytes; ``size`` sets it (overrides CUBLASLT_WORKSPACE_SIZE).

    Capped at the cuBLAS size only when the workspaces are unified
    (TORCH_CUBLAS_WORKSPACE_CACHE=1, as in PyTorch 2.15).
    """
    return _workspace("cublaslt_workspace_size", size, _C.cublaslt_workspace_size)


def blas_workspace_size(size=None, backend=None):
    """The workspace of ``backend`` (default: the preferred BLAS library)."""
    if backend is None:
        choice = preferred_blas_library().value
    else:
        choice = _choice("backplane.backends.cuda.blas_workspace_size", backend, _BlasBackend, _BLAS_STRINGS,
                         what="backend")
    if choice == "ck":
        raise _errors.runtime("backplane.backends.cuda.blas_workspace_size", "CK backend does not use a workspace.")
    if choice == "cublaslt":
        return cublaslt_workspace_size(size)
    return cublas_workspace_size(size)


# ---------------------------------------------------------------- SDPA knobs

def _sdp_setter(path, name):
    def setter(enabled):
        _props.check_bool(f"cuda.{name}", enabled)
        _C.flag_set(path, enabled)
    setter.__name__ = name
    setter.__doc__ = f"Sets {path} (thread-local inside an sdpa_kernel scope)."
    return setter


def _sdp_getter(path, name):
    def getter():
        return _C.flag_get(path)
    getter.__name__ = name
    getter.__doc__ = f"Whether {path} is set."
    return getter


flash_sdp_enabled = _sdp_getter("cuda.flash_sdp_enabled", "flash_sdp_enabled")
enable_flash_sdp = _sdp_setter("cuda.flash_sdp_enabled", "enable_flash_sdp")
mem_efficient_sdp_enabled = _sdp_getter("cuda.mem_efficient_sdp_enabled", "mem_efficient_sdp_enabled")
enable_mem_efficient_sdp = _sdp_setter("cuda.mem_efficient_sdp_enabled", "enable_mem_efficient_sdp")
math_sdp_enabled = _sdp_getter("cuda.math_sdp_enabled", "math_sdp_enabled")
enable_math_sdp = _sdp_setter("cuda.math_sdp_enabled", "enable_math_sdp")
cudnn_sdp_enabled = _sdp_getter("cuda.cudnn_sdp_enabled", "cudnn_sdp_enabled")
enable_cudnn_sdp = _sdp_setter("cuda.cudnn_sdp_enabled", "enable_cudnn_sdp")
fp16_bf16_reduction_math_sdp_allowed = _sdp_getter("cuda.fp16_bf16_reduction_math_sdp_allowed",
                                                   "fp16_bf16_reduction_math_sdp_allowed")
allow_fp16_bf16_reduction_math_sdp = _sdp_setter("cuda.fp16_bf16_reduction_math_sdp_allowed",
                                                 "allow_fp16_bf16_reduction_math_sdp")


def is_flash_attention_available():
    """Whether this build has a CUDA flash-attention implementation."""
    return False


def _require_params(params, what):
    if not isinstance(params, SDPAParams):
        raise _errors.bad_type(f"can_use_{what}_attention", params, "an SDPAParams")


def _cannot_use(debug, what):
    if debug:
        warnings.warn(f"Backplane was built without a CUDA {what} attention implementation, so "
                      f"can_use_{what}_attention is False for every input.", stacklevel=3)
    return False


def _is_cpu_tensor(x):
    """A backplane Tensor on the CPU, or a host array (NumPy, or a DLPack producer on the CPU)."""
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return str(x.device).startswith("cpu")
    if hasattr(x, "__array_interface__"):
        return True
    dlpack_device = getattr(x, "__dlpack_device__", None)
    return dlpack_device is not None and dlpack_device()[0] == 1  # kDLCPU


def _row_answer(params, debug, implementation, label):
    """Whether ``implementation``'s row of the sdpa decision for ``params`` accepts it; with debug, one
    UserWarning per reason it does not ("<label> (<implementation>) not used because <reason>")."""
    from ._dispatch import explain

    table = explain("sdpa", params.query, params.key, params.value, params.attn_mask,
                    dropout_p=float(params.dropout), is_causal=bool(params.is_causal),
                    enable_gqa=bool(params.enable_gqa))
    try:
        row = table.row(implementation)
        ok, reasons = row.status in ("chosen", "acceptable"), row.reasons
    except KeyError:
        ok, reasons = False, [f"{implementation}: not in this build's sdpa list"]
    if debug:
        for reason in reasons:
            warnings.warn(f"{label} ({implementation}) not used because {reason}", UserWarning, stacklevel=3)
    return ok


def can_use_flash_attention(params, debug=False):
    """Whether flash attention accepts ``params`` (reasons warned with debug).

    For CPU tensors this runs the flash:cpu checks (PyTorch answers False there; Backplane describes
    its CPU kernel, DESIGN.md section 4); with debug each failing reason is one UserWarning. For CUDA
    tensors it stays False: this build has no CUDA flash implementation.
    """
    _require_params(params, "flash")
    if not _is_cpu_tensor(params.query):
        return _cannot_use(debug, "flash")
    return _row_answer(params, debug, "flash:cpu", "Flash attention")


def can_use_efficient_attention(params, debug=False):
    """Whether memory-efficient attention accepts ``params`` (reasons warned with debug).

    For CPU tensors this runs the efficient:cpu checks, as can_use_flash_attention does for
    flash:cpu (PyTorch has no CPU memory-efficient kernel and answers False; docs/differences.md).
    For CUDA tensors it stays False: this build has no CUDA memory-efficient implementation.
    """
    _require_params(params, "efficient")
    if not _is_cpu_tensor(params.query):
        return _cannot_use(debug, "efficient")
    return _row_answer(params, debug, "efficient:cpu", "Memory efficient attention")


def can_use_cudnn_attention(params, debug=False):
    """Whether cuDNN attention (cudnn:sdpa) accepts ``params`` (reasons warned with debug).

    Runs exactly the checks the dispatcher runs for cudnn:sdpa (PyTorch's can_use_cudnn_attention
    list, then whether cuDNN builds a graph for the problem). False for CPU tensors (the "device"
    check), and on a build or machine without cuDNN attention (the reason says which).
    """
    _require_params(params, "cudnn")
    return _row_answer(params, debug, "cudnn:sdpa", "cuDNN attention")


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated: use backplane.nn.attention.sdpa_kernel. A thread-local scope over the SDPA flags."""
    warnings.warn("backplane.backends.cuda.sdp_kernel() is deprecated. In the future, this context manager will "
                  "be removed. Please see backplane.nn.attention.sdpa_kernel() for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=2)
    chosen = [b for b, on in ((SDPBackend.FLASH_ATTENTION, enable_flash),
                              (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                              (SDPBackend.MATH, enable_math),
                              (SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    return sdpa_kernel(chosen)


_props.install_module_properties(__name__, "cuda")
