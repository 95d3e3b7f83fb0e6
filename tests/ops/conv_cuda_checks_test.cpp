// The checks of the CUDA conv implementations, SDK-free, so they run
// without a GPU: PyTorch's choice between cuDNN and its native depthwise
// kernel under cudnn.depthwise_kernel (Note [Depthwise kernel on CUDA]) with
// a fake environment, and the flags each CUDA row declares it reads.

#include <gtest/gtest.h>

#include <algorithm>

#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "backplane/op_spec.h"
#include "ops/conv/checks_cuda.h"
#include "ops/conv/impls.h"

namespace bp::ops::conv {
namespace {

using cuda_checks::CudaConvEnv;
using flags::DepthwiseKernel;

const CudaConvEnv kH200{9, 0, 91900};
const CudaConvEnv kPascal{6, 1, 91900};

// A conv2d of [n, c, w, w] with a k x k kernel, as the front end fills it.
Params conv2d(int64_t n, int64_t c, int64_t k_out, int64_t groups, int64_t w, int64_t k, int64_t stride,
              DType dtype = DType::f16) {
  Params p;
  p.spatial = 2, p.n = n, p.c = c, p.k = k_out, p.groups = groups, p.dtype = dtype;
  p.in[1] = p.in[2] = w;
  p.kernel[1] = p.kernel[2] = k;
  p.stride[1] = p.stride[2] = stride;
  p.pad[1] = p.pad[2] = k / 2;
  p.outs[1] = p.outs[2] = (w + 2 * (k / 2) - k) / stride + 1;
  return p;
}

TEST(ConvCudaChecks, DepthwiseIsPyTorchsDefinition) {
  EXPECT_TRUE(cuda_checks::is_depthwise(conv2d(1, 32, 32, 32, 28, 3, 1)));
  EXPECT_TRUE(cuda_checks::is_depthwise(conv2d(1, 32, 64, 32, 28, 3, 1)));  // a multiplier of 2
  EXPECT_FALSE(cuda_checks::is_depthwise(conv2d(1, 32, 32, 1, 28, 3, 1)));
  EXPECT_FALSE(cuda_checks::is_depthwise(conv2d(1, 32, 32, 16, 28, 3, 1)));
  Params t = conv2d(1, 32, 32, 32, 28, 3, 1);
  t.transposed = true;
  EXPECT_FALSE(cuda_checks::is_depthwise(t));
  Params d3 = conv2d(1, 32, 32, 32, 28, 3, 1);
  d3.spatial = 3;
  EXPECT_FALSE(cuda_checks::is_depthwise(d3));  // PyTorch: 4-D inputs only
}

TEST(ConvCudaChecks, DepthwiseKernelSettingDecides) {
  const Params big = conv2d(8, 144, 144, 144, 112, 3, 1);  // a workload cuDNN wins, in float16
  const Params f32 = conv2d(8, 144, 144, 144, 112, 3, 1, DType::f32);
  const Params small = conv2d(1, 144, 144, 144, 14, 3, 1);
  EXPECT_TRUE(cuda_checks::cudnn_takes_depthwise(big, DepthwiseKernel::Auto, kH200));
  EXPECT_FALSE(cuda_checks::cudnn_takes_depthwise(f32, DepthwiseKernel::Auto, kH200));    // fp16 only
  EXPECT_FALSE(cuda_checks::cudnn_takes_depthwise(small, DepthwiseKernel::Auto, kH200));  // the native kernel wins
  EXPECT_FALSE(cuda_checks::cudnn_takes_depthwise(big, DepthwiseKernel::Auto, kPascal));  // SM < 7.0
  Params cl = f32;
  cl.channels_last = true;  // channels-last: cuDNN, whatever the dtype
  EXPECT_TRUE(cuda_checks::cudnn_takes_depthwise(cl, DepthwiseKernel::Auto, kH200));
  for (const Params& p : {big, f32, small, cl}) {
    EXPECT_TRUE(cuda_checks::cudnn_takes_depthwise(p, DepthwiseKernel::Cudnn, kPascal));
    EXPECT_FALSE(cuda_checks::cudnn_takes_depthwise(p, DepthwiseKernel::Native, kH200));
  }
  Params dilated = big;
  dilated.dilation[2] = 2;
  EXPECT_FALSE(cuda_checks::cudnn_takes_depthwise(dilated, DepthwiseKernel::Auto, kH200));
  Params few = conv2d(8, 16, 16, 16, 112, 3, 1);  // fewer than 32 channels
  EXPECT_FALSE(cuda_checks::cudnn_takes_depthwise(few, DepthwiseKernel::Auto, kH200));
}

TEST(ConvCudaChecks, WorkloadHeuristicShape) {
  EXPECT_TRUE(cuda_checks::depthwise_workload_prefers_cudnn(conv2d(1, 64, 64, 64, 112, 3, 1)));   // wide
  EXPECT_FALSE(cuda_checks::depthwise_workload_prefers_cudnn(conv2d(1, 64, 64, 64, 28, 3, 1)));
  EXPECT_TRUE(cuda_checks::depthwise_workload_prefers_cudnn(conv2d(128, 64, 64, 64, 28, 3, 1)));  // big batch
  EXPECT_FALSE(cuda_checks::depthwise_workload_prefers_cudnn(conv2d(128, 64, 64, 64, 28, 7, 1)));  // 7x7
  EXPECT_FALSE(cuda_checks::depthwise_workload_prefers_cudnn(conv2d(128, 64, 64, 64, 28, 3, 3)));  // stride 3
  EXPECT_TRUE(cuda_checks::depthwise_workload_prefers_cudnn(conv2d(64, 256, 256, 256, 56, 3, 2)));
}

// The CUDA rows declare what they read, so `backplane info` and the autotune
// key know it on a machine without a GPU (Note [Slots]).
TEST(ConvCudaChecks, SlotsDeclareTheCudnnKnobs) {
  ensure_ops();
  const dispatch::Op& op = conv_op();
  auto reads = [&](const char* name) {
    const dispatch::Implementation* impl = op.find(name);
    EXPECT_NE(impl, nullptr) << name;
    return impl ? impl->flags_read() : std::vector<flags::Id>{};
  };
  auto has = [](const std::vector<flags::Id>& ids, flags::Id id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  const auto cudnn = reads("cudnn:conv");
  for (flags::Id id : {flags::Id::cudnn_enabled, flags::Id::cudnn_benchmark, flags::Id::cudnn_benchmark_limit,
                       flags::Id::cudnn_deterministic, flags::Id::cudnn_depthwise_kernel,
                       flags::Id::cudnn_conv_fp32_precision, flags::Id::cudnn_fp32_precision})
    EXPECT_TRUE(has(cudnn, id)) << flags::row(id).path();
  const auto native = reads("native:depthwise");
  EXPECT_TRUE(has(native, flags::Id::cudnn_depthwise_kernel));
  EXPECT_TRUE(has(native, flags::Id::cudnn_enabled));
  const auto keys = op.key_flags(DeviceType::cuda);
  EXPECT_TRUE(has({keys.begin(), keys.end()}, flags::Id::cudnn_benchmark));
  // A CUDA knob never keys a CPU entry.
  const auto cpu_keys = op.key_flags(DeviceType::cpu);
  EXPECT_FALSE(has({cpu_keys.begin(), cpu_keys.end()}, flags::Id::cudnn_benchmark));
  EXPECT_TRUE(has({cpu_keys.begin(), cpu_keys.end()}, flags::Id::mkldnn_deterministic));
}

TEST(ConvCudaChecks, WorkspaceRecordsFeedExplainNotes) {
  cuda_checks::record_cudnn_workspace("problem A", 4096, "eng7_k2=1");
  const auto ws = cuda_checks::cudnn_workspace("problem A");
  ASSERT_TRUE(ws.has_value());
  EXPECT_EQ(ws->first, 4096);
  EXPECT_EQ(ws->second, "eng7_k2=1");
  EXPECT_FALSE(cuda_checks::cudnn_workspace("problem B").has_value());
}

}  // namespace
}  // namespace bp::ops::conv
