// Winograd F(4x4, 3x3) (conv_winograd_impl.h) with 16-lane vectors for the
// transforms and the avx512 GEMM kernels for the 36 products.

#include "kernels/cpu/conv_vec.h"
#include "kernels/cpu/conv_winograd_impl.h"

namespace bp::kernels::cpu::detail {

void winograd_f4x3_f32_avx512(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  winograd_f4x3<Zmm>(GemmIsa::avx512, s, x, w, bias, out);
}

}  // namespace bp::kernels::cpu::detail
