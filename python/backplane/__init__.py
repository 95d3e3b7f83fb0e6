"""Backplane: discover the compute backends of this machine, steer their knobs, see what runs.

``backplane.backends`` mirrors ``torch.backends`` name for name; the top
level holds the precision and determinism policy, threads, RNG, memory
statistics and tensors.
"""

from . import _C, _errors
from ._C import __version__, empty_cache, get_num_threads, max_num_threads, memory_stats, reset_peak_memory_stats, set_num_threads
from ._tensor import Tensor, asarray, from_dlpack

from . import __config__, backends, cuda, nn  # noqa: E402
from . import _ops  # noqa: E402

# matmul, addmm, linear here, scaled_dot_product_attention in nn.functional,
# ...: every op entry point, generated from its C++ declaration.
_ops.install()
# A first FFT costs what a new size costs (Note [FFT warm-up at import], src/ops/fft/params.h).
_C.fft_prewarm()

__all__ = [
    "__version__", "show_config", "backends", "cuda", "nn", "Tensor", "asarray", "from_dlpack",
    "set_num_threads", "get_num_threads", "max_num_threads", "manual_seed", "initial_seed", "memory_stats", "reset_peak_memory_stats", "empty_cache",
    "set_float32_matmul_precision", "get_float32_matmul_precision",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "matmul", "addmm", "linear",
]


def show_config():
    """Prints how this Backplane was built: version, compiler, build type, CUDA
    toolkit, each backend built or not and why (the text of backplane.__config__.show(),
    which is torch.__config__.show()'s name)."""
    print(__config__.show(), end="")


def manual_seed(seed):
    """Seeds the generator behind dropout (the CPU and CUDA implementations number it alike)."""
    return _C.manual_seed(seed)


def initial_seed():
    """The seed last given to manual_seed (or the default one)."""
    return _C.initial_seed()


def set_float32_matmul_precision(precision):
    """"highest", "high" or "medium": what fp32 matmuls may use (ieee / tf32 / bf16 on the CPU).

    A view of the fp32 precision tree: sets cuda.matmul and mkldnn.matmul.
    Unknown strings raise ValueError (PyTorch only warns; docs/differences.md).
    """
    _C.set_float32_matmul_precision(precision)


def get_float32_matmul_precision():
    """The matmul precision policy, derived from the precision tree (never raises)."""
    return _C.get_float32_matmul_precision()


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Only deterministic implementations may run (or, with warn_only, warn when another does)."""
    if not isinstance(mode, bool):
        raise _errors.bad_type("use_deterministic_algorithms", mode, "a bool")
    if not isinstance(warn_only, bool):
        raise _errors.bad_type("use_deterministic_algorithms: warn_only", warn_only, "a bool")
    _C.flag_set("deterministic_algorithms", mode)
    _C.flag_set("deterministic_algorithms_warn_only", warn_only)


def are_deterministic_algorithms_enabled():
    return _C.flag_get("deterministic_algorithms")


def is_deterministic_algorithms_warn_only_enabled():
    return _C.flag_get("deterministic_algorithms_warn_only")
