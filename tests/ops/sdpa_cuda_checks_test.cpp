// The checks of the CUDA sdpa implementations and the CUDA priority order,
// SDK-free, so they run without a GPU: each check is asked with a fake
// environment (an SM and a cuDNN version) on CPU-tensor params, and the
// texts are PyTorch's conditions in Backplane's "expected X, got Y" form.

#include <gtest/gtest.h>

#include "backplane/flags.h"
#include "ops/sdpa/checks_cuda.h"
#include "ops/sdpa/priority.h"

namespace bp::ops::sdpa {
namespace {

using cuda_checks::CudaSdpaEnv;
using dispatch::Reasons;

const CudaSdpaEnv kH200{9, 0, 91900};     // SM 9.0, cuDNN 9.19.0
const CudaSdpaEnv kNewH200{9, 0, 92300};  // cuDNN 9.23: head dims up to 256
const CudaSdpaEnv kAmpere{8, 6, 91900};
const CudaSdpaEnv kTuring{7, 5, 91900};

// Params as the front end would fill them for (B, H, L, E) inputs; tensors
// on the CPU, which the env-taking checks do not look at the device of.
Params params(int64_t B, int64_t H, int64_t L, int64_t S, int64_t E, int64_t Ev, DType dtype = DType::f16,
              double dropout = 0.0, int64_t kv_heads = 0) {
  Params p;
  const int64_t Hk = kv_heads ? kv_heads : H;
  p.q_in = Tensor::empty({B, H, L, E}, dtype);
  p.k_in = Tensor::empty({B, Hk, S, E}, dtype);
  p.v_in = Tensor::empty({B, Hk, S, Ev}, dtype);
  p.L = L, p.S = S, p.E = E, p.Ev = Ev;
  p.batch = B * H;
  p.dtype = dtype;
  p.dropout_p = dropout;
  p.enable_gqa = kv_heads != 0;
  return p;
}

template <class Check>
std::string why(Check check, const Params& p) {
  Reasons r(true);
  r.begin_check("c");
  if (check(p, r)) return "";
  return r.list().at(0).expected + " | " + r.list().at(0).got;
}

std::string why_env(bool (*check)(const Params&, const CudaSdpaEnv&, Reasons&), const Params& p,
                    const CudaSdpaEnv& env) {
  return why([&](const Params& q, Reasons& r) { return check(q, env, r); }, p);
}

TEST(CudnnChecks, VersionNeedsCudnn9AndDropoutOutside911To913) {
  const Params p = params(1, 2, 64, 64, 64, 64);
  EXPECT_EQ(why_env(cuda_checks::cudnn_version, p, kH200), "");
  EXPECT_EQ(why_env(cuda_checks::cudnn_version, p, CudaSdpaEnv{9, 0, 80906}),
            "cuDNN 9.0.0 or newer at run time | cuDNN 8.9.6");
  EXPECT_EQ(why_env(cuda_checks::cudnn_version, p, CudaSdpaEnv{9, 0, 0}), "cuDNN 9.0.0 or newer at run time | no cuDNN");
  const Params d = params(1, 2, 64, 64, 64, 64, DType::f16, 0.125);
  EXPECT_EQ(why_env(cuda_checks::cudnn_version, d, CudaSdpaEnv{9, 0, 91200}),
            "a cuDNN with SDPA dropout (not 9.11 - 9.13) when dropout_p > 0 | cuDNN 9.12.0");
  EXPECT_EQ(why_env(cuda_checks::cudnn_version, d, CudaSdpaEnv{9, 0, 91400}), "");
}

TEST(CudnnChecks, DtypesFollowTheArchitecture) {
  EXPECT_EQ(why_env(cuda_checks::cudnn_dtype, params(1, 1, 8, 8, 8, 8, DType::bf16), kAmpere), "");
  EXPECT_EQ(why_env(cuda_checks::cudnn_dtype, params(1, 1, 8, 8, 8, 8, DType::f32), kH200),
            "float16 or bfloat16 | float32");
  EXPECT_EQ(why_env(cuda_checks::cudnn_dtype, params(1, 1, 8, 8, 8, 8, DType::bf16), kTuring),
            "float16 (bfloat16 needs sm 8.0 or newer) | bfloat16");
}

TEST(CudnnChecks, HardwareRangeIsSm80ToSm121) {
  const Params p = params(1, 1, 8, 8, 8, 8);
  EXPECT_EQ(why_env(cuda_checks::cudnn_hardware, p, kH200), "");
  EXPECT_EQ(why_env(cuda_checks::cudnn_hardware, p, CudaSdpaEnv{12, 1, 91900}), "");
  EXPECT_EQ(why_env(cuda_checks::cudnn_hardware, p, kTuring), "a gpu architecture in the range [sm80, sm121] | sm 7.5");
  EXPECT_EQ(why_env(cuda_checks::cudnn_hardware, p, CudaSdpaEnv{}),
            "a gpu architecture in the range [sm80, sm121] | no CUDA device");
}

TEST(CudnnChecks, DropoutResolutionIsOneSixteenth) {
  EXPECT_EQ(why(cuda_checks::cudnn_dropout, params(1, 1, 8, 8, 8, 8, DType::f16, 0.125)), "");
  EXPECT_EQ(why(cuda_checks::cudnn_dropout, params(1, 1, 8, 8, 8, 8, DType::f16, 0.1)),
            "a dropout probability that is a multiple of 1/16 (cuDNN's resolution) | dropout_p 0.1");
}

TEST(CudnnChecks, HeadDimLimitsDependOnSmAndCudnn) {
  EXPECT_EQ(cuda_checks::cudnn_max_head_dim(kH200), 128);
  EXPECT_EQ(cuda_checks::cudnn_max_head_dim(kNewH200), 256);
  EXPECT_EQ(cuda_checks::cudnn_max_head_dim(CudaSdpaEnv{8, 0, 92300}), 128);
  EXPECT_EQ(cuda_checks::cudnn_max_head_dim(CudaSdpaEnv{10, 7, 92400}), 128);
  EXPECT_EQ(cuda_checks::cudnn_max_head_dim(CudaSdpaEnv{10, 7, 92600}), 256);
  EXPECT_EQ(why_env(cuda_checks::cudnn_head_dims, params(1, 1, 8, 8, 128, 128), kH200), "");
  EXPECT_EQ(why_env(cuda_checks::cudnn_head_dims, params(1, 1, 8, 8, 256, 256), kH200),
            "head_dim no more than 128 (or (192, 128) on sm 9.0/10.x) | query/key head_dim 256, value head_dim 256");
  EXPECT_EQ(why_env(cuda_checks::cudnn_head_dims, params(1, 1, 8, 8, 256, 256), kNewH200), "");
  EXPECT_EQ(why_env(cuda_checks::cudnn_head_dims, params(1, 1, 8, 8, 192, 128), kH200), "");  // DeepSeek's pair
  EXPECT_NE(why_env(cuda_checks::cudnn_head_dims, params(1, 1, 8, 8, 192, 128), kAmpere), "");
  EXPECT_EQ(why_env(cuda_checks::cudnn_head_dims, params(1, 1, 8, 8, 60, 64), kH200),
            "head_dim a multiple of 8 | query/key head_dim 60, value head_dim 64");
}

TEST(CudnnChecks, SequenceLengthsSizesAndStrides) {
  EXPECT_EQ(why(cuda_checks::cudnn_seq_lens, params(1, 1, 8, 1, 8, 8)), "key/value sequence length other than 1 | S=1");
  EXPECT_EQ(why(cuda_checks::cudnn_seq_lens, params(1, 1, 1, 8, 8, 8, DType::f16, 0.25)),
            "query sequence length other than 1 when dropout_p > 0 | L=1");
  EXPECT_EQ(why(cuda_checks::cudnn_seq_lens, params(1, 1, 1, 8, 8, 8)), "");
  EXPECT_EQ(why(cuda_checks::cudnn_sizes, params(65536, 1, 1, 2, 8, 8)),
            "batch size and number of heads <= 65535 | batch 65536, heads 1");
  Params broadcast = params(2, 2, 8, 8, 8, 8);
  broadcast.k_in = Tensor::from_storage(broadcast.k_in.storage(), {2, 2, 8, 8}, {0, 64, 8, 1}, 0, DType::f16);
  EXPECT_EQ(why(cuda_checks::dense_strides, broadcast),
            "query, key and value without broadcast (stride 0) dims | an expanded view");
}

// PyTorch's order, less its device check (third in PyTorch), which dispatch
// makes for every implementation from Properties::device.
TEST(CudnnChecks, TheListIsPyTorchsOrderPlusOurs) {
  std::vector<std::string> names;
  for (const auto& c : cuda_checks::cudnn_checks()) names.emplace_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"cudnn_version", "enabled", "dims", "dtype", "mask_shape",
                                             "hardware", "dropout", "seq_len", "stride", "batch_heads", "sizes",
                                             "head_dim", "kv_seq_len", "strides"}));
}

TEST(CudnnChecks, CpuParamsGetNoEnvironment) {
  const Params p = params(1, 1, 8, 8, 8, 8);
  const CudaSdpaEnv env = cuda_checks::cuda_env_of(p);
  EXPECT_EQ(env.sm_major, 0);
  EXPECT_EQ(env.cudnn_version, 0);
}

// ---------------------------------------------------------------- priority

TEST(SdpPriority, PyTorchsPreferCudnnRule) {
  EXPECT_TRUE(prefers_cudnn(kH200, 13000, nullptr));
  EXPECT_FALSE(prefers_cudnn(kH200, 13000, "1"));               // TORCH_CUDNN_SDPA_DEPRIORITIZED=1
  EXPECT_TRUE(prefers_cudnn(kH200, 13000, "0"));
  EXPECT_FALSE(prefers_cudnn(CudaSdpaEnv{9, 0, 91500}, 13000, nullptr));  // needs > 9.15.0
  EXPECT_FALSE(prefers_cudnn(kAmpere, 13000, nullptr));
  EXPECT_TRUE(prefers_cudnn(CudaSdpaEnv{10, 3, 91900}, 12080, nullptr));
  EXPECT_FALSE(prefers_cudnn(CudaSdpaEnv{10, 1, 91900}, 12080, nullptr));  // CUDA < 13: x.0 / x.3 only
  EXPECT_TRUE(prefers_cudnn(CudaSdpaEnv{10, 1, 91900}, 13000, nullptr));
}

TEST(SdpPriority, RanksFollowTheOrderOnCudaOnly) {
  auto impl = [](const char* name) {
    return dispatch::Impl<Params>(name, "cpu", dispatch::Properties{}, {}, [](const Params&) {});
  };
  const auto cudnn = impl("cudnn:sdpa"), math = impl("math:cuda"), flash = impl("flash:cpu");
  dispatch::Problem cuda_problem;
  cuda_problem.device = Device::cuda(0);
  // Default [flash, efficient, math, cudnn, overrideable].
  EXPECT_EQ(priority_rank(flash, cuda_problem), 0);
  EXPECT_EQ(priority_rank(math, cuda_problem), 2);
  EXPECT_EQ(priority_rank(cudnn, cuda_problem), 3);
  EXPECT_EQ(priority_text(), "flash, efficient, math, cudnn, overrideable");
  const int cudnn_first[] = {3, 1, 2, 0, 4};
  backends::cuda::flags_guard g({.sdp_priority_order = flags::pack_order(cudnn_first, 5)});
  EXPECT_EQ(priority_rank(cudnn, cuda_problem), 0);
  EXPECT_EQ(priority_rank(math, cuda_problem), 3);
  EXPECT_EQ(priority_text(), "cudnn, flash, efficient, math, overrideable");
  dispatch::Problem cpu_problem;  // the CPU order is fixed
  EXPECT_EQ(priority_rank(cudnn, cpu_problem), 0);
  EXPECT_EQ(priority_rank(flash, cpu_problem), 0);
  EXPECT_EQ(sdp_backend_of("efficient"), 2);
  EXPECT_EQ(sdp_backend_of("ref"), 4);
}

}  // namespace
}  // namespace bp::ops::sdpa
