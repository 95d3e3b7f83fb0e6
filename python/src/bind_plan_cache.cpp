// Plan caches in Python (the generic control surface: size, max_size,
// clear; the per-device cuFFT caches) and the GEMM workspace sizes.

#include <nanobind/stl/string.h>

#include "backplane/backends/conv_weight_cache.h"
#include "backplane/backends/cuda_workspace.h"
#include "backplane/backends/cufft_plan_cache.h"
#include "backplane/backends/fft_plan_cache.h"
#include "bindings.h"
#include "ops/fft/params.h"

namespace bp::py {

void bind_plan_cache(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PlanCacheBase>(m, "PlanCache")
      .def_prop_rw(
          "size", &PlanCacheBase::size,
          [](PlanCacheBase& c, nb::handle) {
            throw_runtime(c.name() + ".size",
                          ".size is a read-only property showing the number of plans currently in the cache. "
                          "To change the cache capacity, set cufft_plan_cache.max_size.");
          },
          "Number of plans currently cached (read-only).")
      .def_prop_rw("max_size", &PlanCacheBase::max_size, &PlanCacheBase::set_max_size,
                   "Capacity; shrinking evicts least-recently-used plans; 0 disables caching.")
      .def_prop_rw("max_bytes", &PlanCacheBase::max_bytes, &PlanCacheBase::set_max_bytes,
                   "Byte bound on the cached plans (0: none); shrinking evicts least-recently-used plans.")
      .def_prop_ro("bytes", &PlanCacheBase::bytes, "Bytes the cached plans hold, where measurable.")
      .def_prop_ro("hits", &PlanCacheBase::hits)
      .def_prop_ro("misses", &PlanCacheBase::misses)
      .def("clear", &PlanCacheBase::clear, "Drop every cached plan.");
  // Returned as the bound base class (the caches' own template types are not bound).
  m.def("cufft_plan_cache", [](int i) -> PlanCacheBase& { return backends::cuda::cufft_plan_cache(i); },
        nb::rv_policy::reference,
        "The cuFFT plan cache of a CUDA device.");
  m.def("cpu_fft_plan_cache", []() -> PlanCacheBase& { return backends::cpu::fft_plan_cache(); },
        nb::rv_policy::reference,
        "The CPU FFT plan cache (FFTW plans).");
  m.def("cpu_conv_weight_cache", []() -> PlanCacheBase& { return backends::cpu::conv_weight_cache(); },
        nb::rv_policy::reference, "The CPU conv weight cache (winograd:f4x3's transformed weights).");
  m.def("save_fft_wisdom", &backends::cpu::save_fft_wisdom, "path"_a, "Saves FFTW's wisdom to a file (merged).");
  m.def("load_fft_wisdom", &backends::cpu::load_fft_wisdom, "path"_a, "Loads FFTW's wisdom from a file.");
  m.def("fft_prewarm", &ops::fft::prewarm, nb::call_guard<nb::gil_scoped_release>(),
        "What a process's first CPU FFT would pay once (Note [FFT warm-up at import]).");
  m.def("cublas_workspace_size", &backends::cuda::effective_cublas_workspace_size);
  m.def("cublaslt_workspace_size", &backends::cuda::effective_cublaslt_workspace_size);
}

}  // namespace bp::py
