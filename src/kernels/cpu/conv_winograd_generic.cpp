// Winograd F(4x4, 3x3) (conv_winograd_impl.h) with the baseline's 4-lane
// vectors and generic GEMM kernels; the entry point that picks an ISA's.

#include "backplane/error.h"
#include "kernels/cpu/conv_vec.h"
#include "kernels/cpu/conv_winograd_impl.h"

namespace bp::kernels::cpu {
namespace detail {

void winograd_f4x3_f32_generic(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  winograd_f4x3<Quad>(GemmIsa::generic, s, x, w, bias, out);
}

}  // namespace detail

void winograd_f4x3_f32(ConvIsa isa, const ConvShape& s, const float* x, const float* w, const float* bias,
                       float* out) {
  if (!conv_isa_supported(isa))
    throw_runtime("winograd_f4x3_f32", std::string("Winograd variant '") + conv_isa_name(isa) +
                                           "' is not supported on this CPU");
  switch (isa) {
    case ConvIsa::generic: return detail::winograd_f4x3_f32_generic(s, x, w, bias, out);
    case ConvIsa::avx2: return detail::winograd_f4x3_f32_avx2(s, x, w, bias, out);
    case ConvIsa::avx512: return detail::winograd_f4x3_f32_avx512(s, x, w, bias, out);
  }
}

}  // namespace bp::kernels::cpu
