// ConvIsa::avx2: the direct convolution loops (conv_direct_impl.h) on 8-lane
// ymm registers (AVX2 + FMA): 6 points x 2 vectors = 12 accumulators of the
// 16 registers, or 12 x 1 for groups of at most 8 output channels.

#include "kernels/cpu/conv_direct_impl.h"
#include "kernels/cpu/conv_vec.h"

namespace bp::kernels::cpu::detail {

void depthwise_nchw_avx2(const ConvShape& s, DType dtype, const void* x, const float* w, const float* bias, void* out) {
  depthwise_planes_of<Ymm>(s, dtype, x, w, bias, out);
}

void direct_conv_f32_avx2(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  const int64_t kg = s.k / s.groups;
  if (s.groups == s.c && s.groups == s.k) return depthwise<Ymm, 8>(s, x, w, bias, out);
  // The widest block of output channels that wastes the fewest padded lanes.
  switch (best_vectors(kg, 8, 2)) {
    case 2: return general<Ymm, 6, 2>(s, x, w, bias, out);
    default: return general<Ymm, 12, 1>(s, x, w, bias, out);
  }
}

}  // namespace bp::kernels::cpu::detail
