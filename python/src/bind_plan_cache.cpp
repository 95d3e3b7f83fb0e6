// Plan caches in Python (the generic control surface: size, max_size,
// clear; the per-device cuFFT caches) and the GEMM workspace sizes.

#include "backplane/backends/cuda_workspace.h"
#include "backplane/backends/cufft_plan_cache.h"
#include "bindings.h"

namespace bp::py {

void bind_plan_cache(nb::module_& m) {
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
      .def_prop_ro("hits", &PlanCacheBase::hits)
      .def_prop_ro("misses", &PlanCacheBase::misses)
      .def("clear", &PlanCacheBase::clear, "Drop every cached plan.");
  m.def("cufft_plan_cache", &backends::cuda::cufft_plan_cache, nb::rv_policy::reference,
        "The cuFFT plan cache of a CUDA device.");
  m.def("cublas_workspace_size", &backends::cuda::effective_cublas_workspace_size);
  m.def("cublaslt_workspace_size", &backends::cuda::effective_cublaslt_workspace_size);
}

}  // namespace bp::py
