#pragma once
// Copies between the caller's tensors and the channels-last fp32 the CPU
// kernels read and write (direct and Winograd): a blocked transpose between
// NCDHW and NDHWC with the dtype converted on the way, instead of
// Tensor::copy_from's element-by-element walk, which for a transposing copy
// costs more than a small convolution.

#include "backplane/tensor.h"
#include "kernels/cpu/conv_direct.h"

namespace bp::ops::conv {

// out (a dense channels-last fp32 tensor of t's shape) = t (5-D, any dtype
// and strides). bf16 / f16 are converted by the vector kernels of `isa`,
// the ISA of the implementation staging (so the CPU-capability cap that
// limits it limits its copies too); every ISA gives the same bits.
void to_channels_last_f32(const Tensor& t, Tensor& out, kernels::cpu::ConvIsa isa);
// t as a contiguous fp32 tensor (t itself when it is one): a weight or a
// bias for the fp32 kernels. A contiguous bf16 / f16 one is widened by the
// vector kernels of `isa` (Tensor::to went element by element, and for f16
// through a function call each: a 512 x 512 x 3 x 3 weight took longer than
// the convolution it fed).
Tensor contiguous_f32(const Tensor& t, kernels::cpu::ConvIsa isa);
// dst (5-D, any dtype and strides) = src (dense channels-last fp32, same shape).
void store_channels_last_f32(const Tensor& src, const Tensor& dst, kernels::cpu::ConvIsa isa);

}  // namespace bp::ops::conv
