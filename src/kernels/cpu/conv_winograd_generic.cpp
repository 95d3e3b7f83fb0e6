// Winograd F(4x4, 3x3) (conv_winograd_impl.h) with the baseline's 4-lane
// vectors and generic GEMM kernels; the entry point that picks an ISA's.

#include "backplane/error.h"
#include "kernels/cpu/conv_vec.h"
#include "kernels/cpu/conv_winograd_impl.h"

BP_WINOGRAD_VARIANT(generic, Quad, generic)

namespace bp::kernels::cpu {
namespace {
void require_supported(ConvIsa isa, const char* what) {
  if (!conv_isa_supported(isa))
    throw_runtime(what, std::string("Winograd variant '") + conv_isa_name(isa) + "' is not supported on this CPU");
}
}  // namespace

void winograd_f4x3_f32(ConvIsa isa, const ConvShape& s, const float* x, const float* w, const float* bias,
                       float* out, const float* u_ready) {
  require_supported(isa, "winograd_f4x3_f32");
  switch (isa) {
    case ConvIsa::generic: return detail::winograd_f4x3_f32_generic(s, x, w, bias, out, u_ready);
    case ConvIsa::avx2: return detail::winograd_f4x3_f32_avx2(s, x, w, bias, out, u_ready);
    case ConvIsa::avx512: return detail::winograd_f4x3_f32_avx512(s, x, w, bias, out, u_ready);
  }
}

int64_t winograd_weight_floats(ConvIsa isa, const ConvShape& s) {
  require_supported(isa, "winograd_weight_floats");
  switch (isa) {
    case ConvIsa::generic: return detail::winograd_weight_floats_generic(s);
    case ConvIsa::avx2: return detail::winograd_weight_floats_avx2(s);
    case ConvIsa::avx512: return detail::winograd_weight_floats_avx512(s);
  }
  return 0;
}

void winograd_transform_weight_f32(ConvIsa isa, const ConvShape& s, const float* w, float* u) {
  require_supported(isa, "winograd_transform_weight_f32");
  switch (isa) {
    case ConvIsa::generic: return detail::winograd_transform_weight_f32_generic(s, w, u);
    case ConvIsa::avx2: return detail::winograd_transform_weight_f32_avx2(s, w, u);
    case ConvIsa::avx512: return detail::winograd_transform_weight_f32_avx512(s, w, u);
  }
}

}  // namespace bp::kernels::cpu
