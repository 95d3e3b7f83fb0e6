"""backplane.backends.cpu: CPU capability, CPU GEMM library choice and CPU autotuning.

``benchmark`` / ``benchmark_limit`` are generated properties (flag rows
cpu.benchmark, cpu.benchmark_limit).
"""

from .. import _C, _errors
from . import _props

__all__ = ["get_cpu_capability", "preferred_blas_library", "benchmark", "benchmark_limit"]


def get_cpu_capability():
    """"DEFAULT", "AVX2" or "AVX512": the ISA the CPU kernels use (capped by ATEN_CPU_CAPABILITY)."""
    return _C.get_cpu_capability()


def preferred_blas_library(backend=None):
    """Library tried first for CPU GEMM: "default", "builtin", "openblas" or "onednn".

    With ``backend`` set, sets it (validated) and returns the new value;
    without, returns the current one.
    """
    if backend is not None:
        if not isinstance(backend, str):
            raise _errors.bad_type("backplane.backends.cpu.preferred_blas_library", backend,
                                   "a str (one of: default, builtin, openblas, onednn)")
        _C.flag_set("cpu.preferred_blas_library", backend)
    return _C.flag_get("cpu.preferred_blas_library")


_props.install_module_properties(__name__, "cpu")
