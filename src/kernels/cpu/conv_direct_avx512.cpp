// ConvIsa::avx512: the direct convolution loops (conv_direct_impl.h) on
// 16-lane zmm registers. General: 6 points x 4 vectors (64 output
// channels) = 24 accumulators for wide groups, 12 x 2 or 14 x 1 for narrow
// ones, so few lanes are wasted on padding.

#include "kernels/cpu/conv_direct_impl.h"
#include "kernels/cpu/conv_vec.h"

namespace bp::kernels::cpu::detail {

void direct_conv_f32_avx512(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  const int64_t kg = s.k / s.groups;
  if (s.groups == s.c && s.groups == s.k) return depthwise<Zmm, 8>(s, x, w, bias, out);
  if (kg > 32) return general<Zmm, 6, 4>(s, x, w, bias, out);
  if (kg > 16) return general<Zmm, 12, 2>(s, x, w, bias, out);
  general<Zmm, 14, 1>(s, x, w, bias, out);
}

}  // namespace bp::kernels::cpu::detail
