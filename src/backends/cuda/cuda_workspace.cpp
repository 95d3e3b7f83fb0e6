#include "backplane/backends/cuda_workspace.h"

#include <string>

#include "backends/cuda/cuda_loader.h"
#include "backplane/flags.h"
#include "backplane/log.h"
#include "core/env.h"

namespace bp::backends::cuda {
namespace {

constexpr int64_t kHopperDefault = int64_t(4096) * 1024 * 8;  // 32 MiB

bool first_device_is_sm90() {
  const BpCudaApi* api = bp::cuda::api();
  if (api == nullptr) return false;
  char err[128];
  if (api->device_count(err, sizeof err) <= 0) return false;
  int major = 0, minor = 0;
  return api->device_capability(0, &major, &minor) == 0 && major == 9 && minor == 0;
}

}  // namespace

bool unified_workspace() {
  // PyTorch 2.15 (spec section 20): the workspaces are unified only when
  // TORCH_CUBLAS_WORKSPACE_CACHE is "1"; otherwise cuBLASLt's size follows
  // CUBLASLT_WORKSPACE_SIZE (or the API) alone.
  static const bool unified = [] {
    auto v = env::get("TORCH_CUBLAS_WORKSPACE_CACHE");
    if (!v) return false;
    auto b = env::check_torch_bool("TORCH_CUBLAS_WORKSPACE_CACHE", *v);
    return b && *b;
  }();
  return unified;
}

int64_t effective_cublas_workspace_size() {
  const auto id = flags::Id::cuda_cublas_workspace_size;
  if (flags::source(id) == flags::Source::Default && !flags::scoped(id) && first_device_is_sm90()) {
    return kHopperDefault;
  }
  return flags::get_raw(id);
}

int64_t effective_cublaslt_workspace_size() {
  const int64_t lt = flags::get_raw(flags::Id::cuda_cublaslt_workspace_size);
  if (!unified_workspace()) return lt;
  const int64_t cublas = effective_cublas_workspace_size();
  if (lt > cublas) {
    log::warn_once("cublaslt-workspace-cap",
                   "Requested unified cuBLASLt workspace size of " + std::to_string(lt) +
                       " bytes exceeds the cuBLAS workspace size of " + std::to_string(cublas) +
                       " bytes; cuBLASLt will use " + std::to_string(cublas) +
                       " bytes. Increase the cuBLAS size (CUBLAS_WORKSPACE_CONFIG or cublas_workspace_size()) "
                       "or lower CUBLASLT_WORKSPACE_SIZE.");
    return cublas;
  }
  return lt;
}

}  // namespace bp::backends::cuda
