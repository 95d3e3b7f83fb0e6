// The backend registry: the ordered table of probes behind list_backends().

#include "backplane/backends/registry.h"

#include <functional>

#include "backends/probes.h"
#include "backplane/backends/onednn.h"
#include "backplane/error.h"
#include "backplane_build_config.h"

namespace bp::backends {
namespace {

using detail::not_built;
using detail::probe_cuda_library;

// Why an optional library is missing from this build.
[[maybe_unused]] std::string missing(const char* library, const char* option) {
  return std::string(library) + " was not found when Backplane was configured (or BACKPLANE_USE_" + option +
         "=OFF)";
}

struct Entry {
  const char* name;
  std::function<BackendInfo()> probe;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      {"cpu", detail::probe_cpu},
      {"openmp", detail::probe_openmp},
#if BP_HAVE_OPENBLAS
      {"openblas", detail::probe_openblas},
#else
      {"openblas", [] { return not_built("openblas", missing("OpenBLAS", "OPENBLAS")); }},
#endif
#if BP_HAVE_ONEDNN
      {"onednn", detail::probe_onednn},
#else
      {"onednn", [] { return not_built("onednn", missing("oneDNN", "ONEDNN")); }},
#endif
#if BP_HAVE_FFTW
      {"fftw", detail::probe_fftw},
#else
      {"fftw", [] { return not_built("fftw", missing("FFTW3", "FFTW")); }},
#endif
      {"cuda", detail::probe_cuda},
      {"cublas", [] { return probe_cuda_library("cublas", BP_HAVE_CUBLAS); }},
      {"cublaslt", [] { return probe_cuda_library("cublaslt", BP_HAVE_CUBLASLT); }},
      {"cudnn", [] { return probe_cuda_library("cudnn", BP_HAVE_CUDNN); }},
      {"cufft", [] { return probe_cuda_library("cufft", BP_HAVE_CUFFT); }},
      {"cusolver", [] { return probe_cuda_library("cusolver", BP_HAVE_CUSOLVER); }},
      {"cusparselt", [] { return probe_cuda_library("cusparselt", BP_HAVE_CUSPARSELT); }},
      {"nccl", [] { return probe_cuda_library("nccl", BP_HAVE_NCCL); }},
      // Never part of a Linux x86 + NVIDIA build (DESIGN.md §7).
      {"mkl", [] { return not_built("mkl", "Backplane uses OpenBLAS and oneDNN, not Intel MKL"); }},
      {"nnpack", [] { return not_built("nnpack", "NNPACK is not part of Backplane"); }},
      {"mps", [] { return not_built("mps", "Metal Performance Shaders exist only on Apple platforms"); }},
      {"miopen", [] { return not_built("miopen", "MIOpen needs ROCm; Backplane targets NVIDIA CUDA"); }},
      {"kleidiai", [] { return not_built("kleidiai", "KleidiAI micro-kernels are for Arm CPUs"); }},
      {"rocm", [] { return not_built("rocm", "Backplane targets NVIDIA CUDA, not AMD ROCm/HIP"); }},
  };
  return entries;
}

}  // namespace

std::vector<BackendInfo> list_backends() {
  mkldnn::connect_verbose_flag();
  std::vector<BackendInfo> out;
  for (const Entry& e : table()) out.push_back(e.probe());
  return out;
}

BackendInfo backend_info(std::string_view name) {
  mkldnn::connect_verbose_flag();
  for (const Entry& e : table())
    if (name == e.name) return e.probe();
  std::string known;
  for (const Entry& e : table()) known += (known.empty() ? "" : ", ") + std::string(e.name);
  throw_bad_value("backends.backend_info", std::string(name), "one of: " + known);
}

std::vector<std::string> backend_names() {
  std::vector<std::string> out;
  for (const Entry& e : table()) out.emplace_back(e.name);
  return out;
}

namespace detail {

std::string not_built_reason(const std::string& why) { return "not built: " + why; }
std::string not_available_reason(const std::string& why) { return "not available: " + why; }

BackendInfo not_built(const std::string& name, const std::string& why) {
  BackendInfo b;
  b.name = name;
  b.reason = not_built_reason(why);
  return b;
}

std::string decode_version(long v) {
  if (v < 0) return {};
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace detail
}  // namespace bp::backends
