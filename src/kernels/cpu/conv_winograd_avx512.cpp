// Winograd F(4x4, 3x3) (conv_winograd_impl.h) with 16-lane vectors for the
// transforms and the avx512 GEMM kernels for the 36 products.

#include "kernels/cpu/conv_vec.h"
#include "kernels/cpu/conv_winograd_impl.h"

namespace bp::kernels::cpu::detail {

static_assert(Zmm::L == 16, "winograd_weight_floats (conv_winograd_generic.cpp) counts 16 lanes for avx512");

void winograd_f4x3_f32_avx512(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                            const float* u_ready) {
  winograd_f4x3<Zmm>(GemmIsa::avx512, s, x, w, bias, out, u_ready);
}

void winograd_transform_weight_f32_avx512(const ConvShape& s, const float* w, float* u) {
  winograd_transform_weight<Zmm>(s, w, u);
}

}  // namespace bp::kernels::cpu::detail
