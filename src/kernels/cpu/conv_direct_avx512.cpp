// ConvIsa::avx512: the direct convolution loops (conv_direct_impl.h) on
// 16-lane zmm registers. General: 6 points x 4 vectors (64 output channels),
// 8 x 3, 12 x 2 or 14 x 1 (24 to 14 accumulators), whichever wastes the
// fewest lanes on a group's output channels.

#include "kernels/cpu/conv_direct_impl.h"
#include "kernels/cpu/conv_vec.h"

namespace bp::kernels::cpu::detail {

void depthwise_nchw_avx512(const ConvShape& s, DType dtype, const void* x, const float* w, const float* bias, void* out) {
  depthwise_planes_of<Zmm>(s, dtype, x, w, bias, out);
}

void direct_conv_f32_avx512(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  const int64_t kg = s.k / s.groups;
  if (s.groups == s.c && s.groups == s.k) return depthwise<Zmm, 8>(s, x, w, bias, out);
  // The widest block of output channels that wastes the fewest padded lanes.
  switch (best_vectors(kg, 16, 4)) {
    case 4: return general<Zmm, 6, 4>(s, x, w, bias, out);
    case 3: return general<Zmm, 8, 3>(s, x, w, bias, out);
    case 2: return general<Zmm, 12, 2>(s, x, w, bias, out);
    default: return general<Zmm, 14, 1>(s, x, w, bias, out);
  }
}

}  // namespace bp::kernels::cpu::detail
