// The checks of the CUDA conv implementations (checks_cuda.h).

#include "ops/conv/checks_cuda.h"

#include <array>
#include <map>
#include <mutex>

#include "backends/cuda/cuda_loader.h"
#include "backplane/dispatch_checks.h"
#include "backplane/precision.h"

namespace bp::ops::conv::cuda_checks {
namespace {

using flags::DepthwiseKernel;

bool depthwise_cudnn_here(const Params& p, Reasons& r) {
  if (!is_depthwise(p)) return true;
  const auto setting = static_cast<DepthwiseKernel>(flags::get_raw(flags::Id::cudnn_depthwise_kernel));
  if (cudnn_takes_depthwise(p, setting, cuda_env_of(p))) return true;
  return r.fail("a problem that is not depthwise, or cudnn.depthwise_kernel = 'cudnn' (or 'auto' where PyTorch's "
                "heuristic picks cuDNN: channels-last, or float16 with a workload cuDNN's depthwise kernels win)",
                [&] {
                  return std::string("a depthwise problem with cudnn.depthwise_kernel = '") +
                         flags::format(flags::Id::cudnn_depthwise_kernel, static_cast<int64_t>(setting)) +
                         "' (the native depthwise kernel takes it)";
                });
}

bool depthwise_problem(const Params& p, Reasons& r) {
  if (p.groups > 1 && p.groups == p.c && p.k % p.c == 0 && !p.transposed) return true;
  return r.fail("a depthwise convolution (groups == input channels, output channels a multiple of them, forward)",
                [&] {
                  return std::string(p.transposed ? "a transposed convolution" : "groups=" + std::to_string(p.groups)) +
                         " with " + std::to_string(p.c) + " input and " + std::to_string(p.k) + " output channels";
                });
}

// native:depthwise gives way to cuDNN only when cudnn.depthwise_kernel says
// "cudnn" and cuDNN is enabled (Note [Depthwise kernel on CUDA]).
bool native_allowed(const Params&, int64_t setting) {
  return static_cast<DepthwiseKernel>(setting) != DepthwiseKernel::Cudnn;
}
bool cudnn_disabled(const Params&, int64_t enabled) { return enabled == 0; }

std::mutex g_workspace_mutex;
std::map<std::string, std::pair<int64_t, std::string>>& workspaces() {
  static std::map<std::string, std::pair<int64_t, std::string>> m;
  return m;
}

}  // namespace

CudaConvEnv cuda_env_of(const Params& p) {
  return cuda_device_env(p.device);
}

bool is_depthwise(const Params& p) {
  return !p.transposed && p.spatial == 2 && p.groups > 1 && p.groups == p.c && p.k % p.c == 0;
}

bool depthwise_workload_prefers_cudnn(const Params& p) {
  const int64_t w = p.in[2], ch = p.c, bs = p.n, stride = p.stride[2], filter = p.kernel[2];
  if (p.in[1] == 1 && stride == 1) return true;  // 1-D
  if ((stride != 1 && stride != 2) || p.kernel[1] != p.kernel[2]) return false;
  if (filter != 1 && filter != 3 && filter != 5) return false;
  if (w < 7) return false;
  // Wide images and big batches or channel counts amortise cuDNN's setup;
  // small ones run faster in the native kernel.
  if (stride == 1) {
    if (w >= 112 || (ch >= 1024 && (w >= 56 || bs >= 32))) return true;
    if (bs >= 128) return ch >= 512 || (ch >= 64 && w >= 14) || w >= 28;
    if (bs >= 64) return ch >= 256 ? w >= 14 : w >= 28;
    if (bs >= 32) return ch >= 256 ? w >= 28 : w >= 56;
    if (bs >= 16) return ch >= 1024 ? w >= 14 : w >= 56;
    return bs >= 8 && ch >= 512 && w >= 56;
  }
  if (w >= 56) return bs >= 64 || ch >= 256;  // stride 2
  return bs >= 128 && ch >= 512 && w >= 14;
}

bool cudnn_takes_depthwise(const Params& p, DepthwiseKernel setting, const CudaConvEnv& env) {
  switch (setting) {
    case DepthwiseKernel::Cudnn: return true;
    case DepthwiseKernel::Native: return false;
    case DepthwiseKernel::Auto: break;
  }
  if (p.channels_last) return true;
  const bool supported = env.sm_major >= 7 && env.cudnn_version >= 80200;
  const bool kernel_cond = p.dtype == DType::f16 && p.unit_dilation() &&
                           (p.stride[1] == p.stride[2] || p.in[1] == 1) && p.c >= 32;
  return supported && kernel_cond && depthwise_workload_prefers_cudnn(p);
}

std::vector<dispatch::Check<Params>> cudnn_checks() {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(enabled<Params>(flags::Id::cudnn_enabled));
  list.push_back(dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  dispatch::Check<Params> depthwise{"depthwise_kernel", depthwise_cudnn_here, {flags::Id::cudnn_depthwise_kernel}};
  list.push_back(std::move(depthwise));
  return list;
}

std::vector<flags::Id> cudnn_run_flags() {
  std::vector<flags::Id> ids = {flags::Id::cudnn_benchmark, flags::Id::cudnn_benchmark_limit,
                                flags::Id::cudnn_deterministic, flags::Id::generic_deterministic_algorithms};
  for (flags::Id id : precision::path(precision::Backend::cuda, precision::Op::conv)) ids.push_back(id);
  return ids;
}

std::vector<dispatch::Check<Params>> depthwise_checks() {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back({"depthwise", depthwise_problem});
  list.push_back(dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  // Gives way to cuDNN only under depthwise_kernel 'cudnn' with cuDNN enabled:
  // two blocks, either of which lets it run.
  auto setting = flag_allows<Params>("depthwise_kernel", flags::Id::cudnn_depthwise_kernel, native_allowed,
                                     "cudnn.depthwise_kernel 'auto' or 'native'");
  auto off = flag_allows<Params>("depthwise_kernel", flags::Id::cudnn_enabled, cudnn_disabled, "cudnn.enabled = False");
  dispatch::Check<Params> either{"depthwise_kernel",
                                 [setting, off](const Params& p, Reasons& r) {
                                   Reasons quiet(false);
                                   if (setting.fn(p, quiet) || off.fn(p, quiet)) return true;
                                   return r.fail("cudnn.depthwise_kernel 'auto' or 'native', or cudnn.enabled = False",
                                                 "cudnn.depthwise_kernel = 'cudnn' with cuDNN enabled (cudnn:conv "
                                                 "takes depthwise problems)");
                                 },
                                 {flags::Id::cudnn_depthwise_kernel, flags::Id::cudnn_enabled}};
  list.push_back(std::move(either));
  return list;
}

void record_cudnn_workspace(const std::string& problem, int64_t bytes, const std::string& plan) {
  std::lock_guard<std::mutex> lock(g_workspace_mutex);
  auto& m = workspaces();
  if (m.size() >= 1024) m.clear();  // bounded: only explain reads it
  m[problem] = {bytes, plan};
}

std::optional<std::pair<int64_t, std::string>> cudnn_workspace(const std::string& problem) {
  std::lock_guard<std::mutex> lock(g_workspace_mutex);
  auto it = workspaces().find(problem);
  if (it == workspaces().end()) return std::nullopt;
  return it->second;
}

}  // namespace bp::ops::conv::cuda_checks
