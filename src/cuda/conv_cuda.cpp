// native:depthwise and ref:cuda: the run functions of the conv op's plain
// CUDA slots (their checks live in ops/conv/checks_cuda.cpp and op.cpp),
// over the kernels of conv_kernels.cu. ref:cuda takes every valid CUDA
// problem (forward and transposed, any strides) and is there to validate
// the others; native:depthwise is PyTorch's "native" depthwise path, which
// cudnn.depthwise_kernel chooses against cuDNN (Note [Depthwise kernel on CUDA]).

#include <stdexcept>
#include <string>

#include "backplane/dispatch.h"
#include "backplane/error.h"
#include "conv_kernels.h"
#include "fills.h"
#include "gemm_args.h"
#include "ops/conv/impls.h"
#include "ops/conv/params.h"

namespace bp::cuda_impl {
namespace {

using ops::conv::Params;

ConvTensor tensor_of(const Tensor& t) {
  ConvTensor v{};
  v.data = const_cast<void*>(t.data());
  for (int d = 0; d < 5; ++d) v.sizes[d] = t.size(d), v.strides[d] = t.stride(d);
  return v;
}

ConvArgs args_of(const Params& p) {
  ConvArgs a{};
  a.type = p.dtype;
  a.x = tensor_of(p.x), a.w = tensor_of(p.w), a.out = tensor_of(p.out);
  a.bias = p.has_bias() ? p.bias.data() : nullptr;
  a.bias_stride = p.has_bias() ? p.bias.stride(0) : 0;
  a.transposed = p.transposed;
  a.groups = p.groups;
  for (int i = 0; i < 3; ++i) a.stride[i] = p.stride[i], a.pad[i] = p.pad[i], a.dilation[i] = p.dilation[i];
  return a;
}

template <void (*Kernel)(int, const ConvArgs&)>
void run_kernel(const char* name, const Params& p) {
  try {
    Kernel(p.device.index, args_of(p));
  } catch (const std::runtime_error& e) {
    throw_runtime(name, std::string(name) + ": " + e.what());
  }
}

void run_reference(const Params& p) { run_kernel<conv_reference>("ref:cuda", p); }
void run_depthwise(const Params& p) { run_kernel<conv_depthwise>("native:depthwise", p); }

}  // namespace

void fill_conv_native() {
  dispatch::fill<Params>(ops::conv::conv_op(), "native:depthwise", run_depthwise);
  dispatch::fill<Params>(ops::conv::conv_op(), "ref:cuda", run_reference);
}

void add_conv_bias(const Params& p) {
  try {
    add_bias(p.device.index, args_of(p));
  } catch (const std::runtime_error& e) {
    throw_runtime("cudnn:conv", std::string("cudnn:conv: ") + e.what());
  }
}

}  // namespace bp::cuda_impl
