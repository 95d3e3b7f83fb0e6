// ConvIsa::generic: the direct convolution loops (conv_direct_impl.h) on a
// four-float struct the compiler maps to the baseline's SSE registers
// (separate multiply and add: the baseline has no FMA). The fallback on
// every CPU, and the entry point that picks an ISA's kernels.

#include "kernels/cpu/conv_direct_impl.h"
#include "kernels/cpu/conv_vec.h"

#include "backplane/error.h"

namespace bp::kernels::cpu {
namespace detail {

void depthwise_nchw_generic(const ConvShape& s, DType dtype, const void* x, const float* w, const float* bias, void* out) {
  depthwise_planes_of<Quad>(s, dtype, x, w, bias, out);
}

void direct_conv_f32_generic(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  if (s.groups == s.c && s.groups == s.k) return depthwise<Quad, 4>(s, x, w, bias, out);
  general<Quad, 4, 2>(s, x, w, bias, out);
}

}  // namespace detail

const char* conv_isa_name(ConvIsa isa) {
  switch (isa) {
    case ConvIsa::generic: return "generic";
    case ConvIsa::avx2: return "avx2";
    case ConvIsa::avx512: return "avx512";
  }
  return "unknown";
}

bool conv_isa_supported(ConvIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  switch (isa) {
    case ConvIsa::generic: return true;
    case ConvIsa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case ConvIsa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
  }
  return false;
#else
  return isa == ConvIsa::generic;
#endif
}

void direct_depthwise_nchw(ConvIsa isa, const ConvShape& s, DType dtype, const void* x, const float* w,
                           const float* bias, void* out) {
  if (!conv_isa_supported(isa))
    throw_runtime("direct_depthwise_nchw", std::string("direct convolution variant '") + conv_isa_name(isa) +
                                               "' is not supported on this CPU");
  if (dtype != DType::f32 && dtype != DType::bf16 && dtype != DType::f16)
    throw_runtime("direct_depthwise_nchw", std::string("no planes of dtype ") + dtype_name(dtype));
  switch (isa) {
    case ConvIsa::generic: return detail::depthwise_nchw_generic(s, dtype, x, w, bias, out);
    case ConvIsa::avx2: return detail::depthwise_nchw_avx2(s, dtype, x, w, bias, out);
    case ConvIsa::avx512: return detail::depthwise_nchw_avx512(s, dtype, x, w, bias, out);
  }
}

void direct_conv_f32(ConvIsa isa, const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  if (!conv_isa_supported(isa))
    throw_runtime("direct_conv_f32", std::string("direct convolution variant '") + conv_isa_name(isa) +
                                         "' is not supported on this CPU");
  switch (isa) {
    case ConvIsa::generic: return detail::direct_conv_f32_generic(s, x, w, bias, out);
    case ConvIsa::avx2: return detail::direct_conv_f32_avx2(s, x, w, bias, out);
    case ConvIsa::avx512: return detail::direct_conv_f32_avx512(s, x, w, bias, out);
  }
}

}  // namespace bp::kernels::cpu
