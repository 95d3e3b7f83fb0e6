// The CUDA order of the sdpa implementations (priority.h).

#include "ops/sdpa/priority.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "backends/cuda/cuda_loader.h"
#include "backplane/flags.h"

namespace bp::ops::sdpa {
namespace {
constexpr int kBackends = 5;
constexpr const char* kBackendNames[kBackends] = {"math", "flash", "efficient", "cudnn", "overrideable"};
constexpr int kCudnnFirst[kBackends] = {3, 1, 2, 0, 4};
}  // namespace

int sdp_backend_of(std::string_view library) {
  for (int b = 0; b < 4; ++b)
    if (library == kBackendNames[b]) return b;
  return 4;
}

int priority_rank(const dispatch::Implementation& impl, const dispatch::Problem& p) {
  if (!p.device.is_cuda()) return 0;
  const int64_t order = flags::get_raw(flags::Id::cuda_sdp_priority_order);
  const int backend = sdp_backend_of(impl.library());
  for (int i = 0; i < kBackends; ++i)
    if (flags::order_at(order, i) == backend) return i;
  return kBackends;
}

std::string priority_text() {
  const int64_t order = flags::get_raw(flags::Id::cuda_sdp_priority_order);
  std::string out;
  for (int i = 0; i < kBackends; ++i) {
    const int b = flags::order_at(order, i);
    out += (i ? ", " : "") + std::string(b < kBackends ? kBackendNames[b] : "?");
  }
  return out;
}

bool prefers_cudnn(const cuda_checks::CudaSdpaEnv& env, int cuda_runtime_version, const char* deprioritized_env) {
  if (deprioritized_env && std::strcmp(deprioritized_env, "1") == 0) return false;
  if (env.cudnn_version <= 91500) return false;
  if (env.sm_major != 9 && env.sm_major != 10) return false;
  return cuda_runtime_version >= 13000 || env.sm_minor == 0 || env.sm_minor == 3;
}

void prefer_cudnn_once(const Params& p) {
  if (!p.device.is_cuda()) return;
  static std::once_flag once;
  std::call_once(once, [&] {
    const flags::Id id = flags::Id::cuda_sdp_priority_order;
    if (flags::source(id) != flags::Source::Default || flags::scoped(id)) return;
    const BpCudaApi* api = bp::cuda::api();
    const int runtime = api ? api->runtime_version() : 0;
    if (!prefers_cudnn(cuda_checks::cuda_env_of(p), runtime, std::getenv("TORCH_CUDNN_SDPA_DEPRIORITIZED"))) return;
    flags::set_raw(id, flags::pack_order(kCudnnFirst, kBackends));
  });
}

}  // namespace bp::ops::sdpa
