// The checks of the CUDA sdpa implementations (checks_cuda.h).

#include "ops/sdpa/checks_cuda.h"

#include <array>
#include <cmath>
#include <mutex>
#include <string>

#include "backends/cuda/cuda_loader.h"
#include "backends/probes.h"
#include "backplane/dispatch_checks.h"
#include "ops/sdpa/checks.h"

namespace bp::ops::sdpa::cuda_checks {
namespace {

std::string sm_text(const CudaSdpaEnv& env) {
  return "sm " + std::to_string(env.sm_major) + "." + std::to_string(env.sm_minor);
}

// SM 9.0 or any 10.x: where cuDNN's larger head sizes exist (spec §4.10.7).
bool hopper_or_blackwell(const CudaSdpaEnv& env) {
  return (env.sm_major == 9 && env.sm_minor == 0) || env.sm_major == 10;
}

// The environment-taking checks bound to the tensors' device, as plain
// functions (a Check holds a function pointer).
bool version_here(const Params& p, Reasons& r) { return cudnn_version(p, cuda_env_of(p), r); }
bool dtype_here(const Params& p, Reasons& r) { return cudnn_dtype(p, cuda_env_of(p), r); }
bool hardware_here(const Params& p, Reasons& r) { return cudnn_hardware(p, cuda_env_of(p), r); }
bool head_dims_here(const Params& p, Reasons& r) { return cudnn_head_dims(p, cuda_env_of(p), r); }

}  // namespace

CudaSdpaEnv cuda_env_of(const Params& p) {
  return cuda_device_env(p.device);
}

bool math_cuda_view_dims(const Params& p, Reasons& r) {
  const auto ext = static_cast<int>(p.ext_shape.size());
  return ext + 2 <= kMathCudaMaxViewDims ||
         r.fail("at most " + std::to_string(kMathCudaMaxViewDims - 2) + " batch dims", std::to_string(ext));
}

bool cudnn_version(const Params& p, const CudaSdpaEnv& env, Reasons& r) {
  if (env.cudnn_version < 90000)
    return r.fail("cuDNN 9.0.0 or newer at run time", [&] {
      return env.cudnn_version ? "cuDNN " + backends::detail::decode_version(env.cudnn_version) : std::string("no cuDNN");
    });
  // cuDNN 9.11 to 9.13 lost dropout in SDPA (PyTorch checks the same range).
  if (p.dropout_p > 0 && env.cudnn_version >= 91100 && env.cudnn_version < 91400)
    return r.fail("a cuDNN with SDPA dropout (not 9.11 - 9.13) when dropout_p > 0",
                  [&] { return "cuDNN " + backends::detail::decode_version(env.cudnn_version); });
  return true;
}

bool cudnn_dtype(const Params& p, const CudaSdpaEnv& env, Reasons& r) {
  const bool bf16_ok = env.sm_major >= 8;
  if (p.dtype == DType::f16 || (p.dtype == DType::bf16 && bf16_ok)) return true;
  return r.fail(bf16_ok ? "float16 or bfloat16" : "float16 (bfloat16 needs sm 8.0 or newer)",
                [&] { return std::string(dtype_name(p.dtype)); });
}

bool cudnn_hardware(const Params&, const CudaSdpaEnv& env, Reasons& r) {
  const int sm = env.sm_major * 10 + env.sm_minor;
  if (env.sm_major > 0 && sm >= 80 && sm <= 121) return true;
  return r.fail("a gpu architecture in the range [sm80, sm121]",
                [&] { return env.sm_major ? sm_text(env) : std::string("no CUDA device"); });
}

bool cudnn_dropout(const Params& p, Reasons& r) {
  const double sixteenths = p.dropout_p * 16.0;
  if (sixteenths == std::floor(sixteenths)) return true;
  return r.fail("a dropout probability that is a multiple of 1/16 (cuDNN's resolution)",
                [&] { return "dropout_p " + checks::num_text(p.dropout_p); });
}

bool cudnn_sizes(const Params& p, Reasons& r) {
  if (p.q_in.ndim() != 4) return true;  // "dims" reports it
  constexpr int64_t kMax = 65535;
  const int64_t b = p.q_in.size(0), h = p.q_in.size(1);
  if (b <= kMax && h <= kMax) return true;
  return r.fail("batch size and number of heads <= 65535",
                [&] { return "batch " + std::to_string(b) + ", heads " + std::to_string(h); });
}

int cudnn_max_head_dim(const CudaSdpaEnv& env) {
  const bool sm107_old = env.sm_major == 10 && env.sm_minor == 7 && env.cudnn_version <= 92500;
  return hopper_or_blackwell(env) && !sm107_old && env.cudnn_version > 92200 ? 256 : 128;
}

bool cudnn_head_dims(const Params& p, const CudaSdpaEnv& env, Reasons& r) {
  const int64_t dqk = p.E, dv = p.Ev;
  const int limit = cudnn_max_head_dim(env);
  // (192, 128), DeepSeek's shape, has its own kernels on SM 9.0/10.x from cuDNN 9.11.
  const bool pair_192_128 = dqk == 192 && dv == 128 && hopper_or_blackwell(env) && env.cudnn_version >= 91100;
  auto got = [&] { return "query/key head_dim " + std::to_string(dqk) + ", value head_dim " + std::to_string(dv); };
  if (!pair_192_128 && (dqk > limit || dv > limit))
    return r.fail("head_dim no more than " + std::to_string(limit) + " (or (192, 128) on sm 9.0/10.x)", got);
  if (dqk % 8 != 0 || dv % 8 != 0) return r.fail("head_dim a multiple of 8", got);
  return true;
}

bool cudnn_seq_lens(const Params& p, Reasons& r) {
  if (p.S == 1) return r.fail("key/value sequence length other than 1", "S=1");
  if (p.dropout_p > 0 && p.L == 1) return r.fail("query sequence length other than 1 when dropout_p > 0", "L=1");
  return true;
}

bool dense_strides(const Params& p, Reasons& r) {
  auto dense = [](const Tensor& t) {
    for (int64_t d = 0; d < t.ndim(); ++d)
      if (t.size(d) > 1 && t.stride(d) == 0) return false;
    return true;
  };
  if (dense(p.q_in) && dense(p.k_in) && dense(p.v_in)) return true;
  return r.fail("query, key and value without broadcast (stride 0) dims", "an expanded view");
}

std::vector<dispatch::Check<Params>> cudnn_checks() {
  using C = dispatch::Check<Params>;
  std::vector<C> list;  // pushed one by one: GCC 12 trips over braced lists of Checks
  list.push_back(C{"cudnn_version", version_here});
  list.push_back(dispatch::checks::enabled<Params>(flags::Id::cuda_cudnn_sdp_enabled,
                                                   "cuDNN attention enabled (backends.cuda.enable_cudnn_sdp(True))"));
  list.push_back(C{"dims", checks::four_dims});
  list.push_back(C{"dtype", dtype_here});
  list.push_back(C{"mask_shape", checks::mask_shape});
  list.push_back(C{"hardware", hardware_here});
  list.push_back(C{"dropout", cudnn_dropout});
  list.push_back(C{"seq_len", checks::nonzero_seq_lens});
  list.push_back(C{"stride", checks::last_dim_stride});
  list.push_back(C{"batch_heads", checks::batch_and_heads});
  list.push_back(C{"sizes", cudnn_sizes});
  list.push_back(C{"head_dim", head_dims_here});
  list.push_back(C{"kv_seq_len", cudnn_seq_lens});
  list.push_back(C{"strides", dense_strides});
  return list;
}

std::vector<dispatch::Check<Params>> math_cuda_checks() {
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dispatch::checks::enabled<Params>(flags::Id::cuda_math_sdp_enabled,
                                                   "math attention enabled (backends.cuda.enable_math_sdp(True))"));
  list.push_back({"dims", math_cuda_view_dims});
  return list;
}

}  // namespace bp::ops::sdpa::cuda_checks
