"""backplane.backends.cpu: CPU capability, CPU GEMM library choice, CPU autotuning and the CPU caches.

``benchmark`` / ``benchmark_limit`` / ``fft_planning_effort`` are generated
properties (flag rows cpu.benchmark, cpu.benchmark_limit,
cpu.fft_planning_effort). ``fft_plan_cache`` is the CPU counterpart of
``cuda.cufft_plan_cache``, and ``conv_weight_cache`` keeps convolution
weights as winograd:f4x3 transformed them (Backplane additions).
"""

import os

from .. import _C, _errors
from . import _props

__all__ = ["get_cpu_capability", "preferred_blas_library", "benchmark", "benchmark_limit", "fft_planning_effort",
           "fft_plan_cache", "FFTPlanCache", "conv_weight_cache", "ConvWeightCache"]


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


def _cache_property(name, doc, settable=False):
    """A property forwarding to attribute ``name`` of the C++ cache the class's ``_cache()`` returns."""
    def get(self):
        return getattr(self._cache(), name)

    def set_(self, value):
        setattr(self._cache(), name, value)
    return property(get, set_ if settable else None, doc=doc)


class _CpuCache:
    """What the CPU caches share: ``cuda.cufft_plan_cache[i]``'s interface
    (``size`` read-only, ``max_size``, ``clear()``) plus ``max_bytes``,
    ``bytes``, ``hits`` and ``misses``."""

    _name = ""
    _what = "plans"

    @property
    def size(self):
        """Number of entries currently cached (read-only)."""
        return self._cache().size

    @size.setter
    def size(self, value):
        raise _errors.runtime(self._name, f".size is a read-only property showing the number of {self._what} "
                                          f"currently in the cache. To change the cache capacity, set "
                                          f"{self._name}.max_size.")

    max_size = _cache_property("max_size", "Capacity; shrinking evicts least-recently-used entries; 0 disables "
                                           "caching.", settable=True)
    max_bytes = _cache_property("max_bytes", "Byte bound on the cached entries (0: none); shrinking evicts "
                                             "least-recently-used entries.", settable=True)
    bytes = _cache_property("bytes", "Bytes the cached entries hold")
    hits = _cache_property("hits", "Lookups that found an entry")
    misses = _cache_property("misses", "Lookups that made one")

    def clear(self):
        """Drops every cached entry."""
        self._cache().clear()

    def __repr__(self):
        return f"<{type(self).__name__} of cpu: {self.size} of at most {self.max_size} {self._what}>"


class FFTPlanCache(_CpuCache):
    """The CPU FFT plan cache (FFTW plans of the fft op's fftw:dft), with
    ``cuda.cufft_plan_cache[i]``'s interface: ``size`` (read-only),
    ``max_size`` (default 4096; 0 disables caching; negative raises),
    ``clear()``; plus ``max_bytes`` (a byte bound, 0: none), ``bytes``,
    ``hits``, ``misses``, and ``save(path)`` / ``load(path)`` of FFTW's
    wisdom, so plans measured once (``fft_planning_effort = "measure"``)
    are made again quickly in a later process.
    """

    _name = "fft_plan_cache"
    _cache = staticmethod(lambda: _C.cpu_fft_plan_cache())

    def save(self, path):
        """Writes FFTW's wisdom to ``path`` (merged with the wisdom already there; written safely)."""
        _C.save_fft_wisdom(os.fspath(path))

    def load(self, path):
        """Imports FFTW's wisdom from ``path``; False (with a warning) when there is no such file."""
        return _C.load_fft_wisdom(os.fspath(path))


class ConvWeightCache(_CpuCache):
    """Convolution weights as winograd:f4x3 transformed them (36 x C x K
    floats per weight), kept across calls while the weight's values stay the
    same: every call compares them with a copy, and a weight changed in place
    is transformed again. The plan caches' interface: ``size`` (read-only),
    ``max_size`` (default 256; 0 disables caching), ``max_bytes`` (default
    256 MiB), ``bytes``, ``hits``, ``misses``, ``clear()``.
    """

    _name = "conv_weight_cache"
    _what = "weights"
    _cache = staticmethod(lambda: _C.cpu_conv_weight_cache())


fft_plan_cache = FFTPlanCache()
conv_weight_cache = ConvWeightCache()

_props.install_module_properties(__name__, "cpu")
