// The "onednn" record, from dnnl_version() and the ISA oneDNN will generate
// code for on this CPU (dnnl_get_effective_cpu_isa).

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "backends/onednn/onednn_bf16.h"
#include "backends/probes.h"

namespace bp::backends::detail {
namespace {

const char* runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_NONE: return "none";
    case DNNL_RUNTIME_SEQ: return "sequential";
    case DNNL_RUNTIME_OMP: return "openmp";
    case DNNL_RUNTIME_TBB: return "tbb";
    case DNNL_RUNTIME_THREADPOOL: return "threadpool";
    case DNNL_RUNTIME_OCL: return "opencl";
    case DNNL_RUNTIME_SYCL: return "sycl";
    default: return "unknown";
  }
}

}  // namespace

BackendInfo probe_onednn() {
  BackendInfo b;
  b.name = "onednn";
  b.built = true;
  b.available = true;
  const dnnl_version_t* v = dnnl_version();
  b.version = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  const char* isa = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());
  b.features.push_back(isa ? isa : "unknown");
  if (backends::onednn::has_bf16()) b.features.push_back("bf16");
  b.details = {
      {"isa", isa ? isa : "unknown"},
      {"bf16", backends::onednn::has_bf16() ? "yes" : "no (this CPU's oneDNN has no bf16 matmul or convolution)"},
      {"cpu runtime", runtime_name(v->cpu_runtime)},
      {"gpu runtime", runtime_name(v->gpu_runtime)},
      {"git hash", v->hash ? v->hash : ""},
  };
  return b;
}

}  // namespace bp::backends::detail
