#pragma once
// The device kernels of the CUDA conv implementations (conv_cuda.cpp,
// conv_cudnn.cpp), behind a plain interface so the .cu file needs none of
// the C++20 core headers:
//  - conv_reference: any forward or transposed convolution, one thread per
//    output summing its inputs in a fixed order (ref:cuda);
//  - conv_depthwise: the native depthwise kernel (groups == C, K a multiple
//    of C), one thread per output, the weights of its channel read through
//    the read-only cache (native:depthwise);
//  - add_bias: out[n, k, ...] += bias[k] (cudnn:conv's graph has no bias).
// Errors are thrown as std::runtime_error; the callers turn them into
// RuntimeErrors naming the implementation.

#include <cstdint>

#include "backplane/dtype.h"  // DType: x, w, bias and out share one of the four float types

namespace bp::cuda_impl {

struct ConvTensor {  // a 5-D view [N, C, D, H, W] (weights [K or C, C/G or K/G, KD, KH, KW])
  void* data;
  int64_t sizes[5];
  int64_t strides[5];  // in elements
};

struct ConvArgs {
  DType type;  // of x, w, bias and out alike
  ConvTensor x, w, out;
  const void* bias;  // [K], contiguous, or null
  int64_t bias_stride;
  bool transposed;
  int64_t groups;
  int64_t stride[3], pad[3], dilation[3];
};

void conv_reference(int device, const ConvArgs& a);
void conv_depthwise(int device, const ConvArgs& a);  // forward, groups == C
void add_bias(int device, const ConvArgs& a);        // a.out += a.bias

}  // namespace bp::cuda_impl
