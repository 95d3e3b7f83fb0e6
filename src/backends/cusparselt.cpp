// torch.backends.cusparselt: build-time availability and the run-time version
// of the library linked into backplane_cuda.

#include "backplane/backends/cusparselt.h"

#include "backends/cuda/cuda_loader.h"
#include "backplane_build_config.h"

#ifndef BP_HAVE_CUSPARSELT
#define BP_HAVE_CUSPARSELT 0  // the build does not look for cuSPARSELt
#endif

namespace bp::backends::cusparselt {

bool is_available() { return BP_HAVE_CUSPARSELT != 0; }

std::optional<int> version() {
  if (!is_available()) return std::nullopt;
  static const std::optional<int> v = []() -> std::optional<int> {
    const BpCudaApi* a = ::bp::cuda::api();
    if (a == nullptr) return std::nullopt;
    const long v = a->library_version("cusparselt");
    return v < 0 ? std::nullopt : std::optional<int>(int(v));
  }();
  return v;
}

std::optional<int> max_alg_id_for_version(int version) {
  // PyTorch's table (torch/backends/cusparselt/__init__.py); other versions
  // have no known answer.
  switch (version) {
    case 400: return 4;
    case 502: return 5;
    case 602: return 37;
    default: return std::nullopt;
  }
}

std::optional<int> get_max_alg_id() {
  auto v = version();
  return v ? max_alg_id_for_version(*v) : std::nullopt;
}

}  // namespace bp::backends::cusparselt
