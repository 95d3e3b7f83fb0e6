// Winograd F(4x4, 3x3) (conv_winograd_impl.h) with 8-lane vectors for the
// transforms and the avx2 GEMM kernels for the 36 products.

#include "kernels/cpu/conv_vec.h"
#include "kernels/cpu/conv_winograd_impl.h"

namespace bp::kernels::cpu::detail {

static_assert(Ymm::L == 8, "winograd_weight_floats (conv_winograd_generic.cpp) counts 8 lanes for avx2");

void winograd_f4x3_f32_avx2(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                            const float* u_ready) {
  winograd_f4x3<Ymm>(GemmIsa::avx2, s, x, w, bias, out, u_ready);
}

void winograd_transform_weight_f32_avx2(const ConvShape& s, const float* w, float* u) {
  winograd_transform_weight<Ymm>(s, w, u);
}

}  // namespace bp::kernels::cpu::detail
