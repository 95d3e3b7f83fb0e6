#pragma once
// Backplane's direct convolution kernels (src/kernels/cpu/conv_direct_*.cpp):
// forward convolution of channels-last fp32 data, one kernel set per ISA
// (compiled with that ISA's flags, picked at run time), parallel with
// OpenMP over the caller's thread count.
//
// Two loops, both register-blocked (Note [Direct convolution blocking] in
// conv_direct_impl.h):
//   - depthwise (one input and one output channel per group): vectors run
//     along the channels, which are contiguous in channels-last memory;
//   - everything else (dense, grouped): vectors run along a block of output
//     channels, a few output points share each weight load, and input
//     values are broadcast.
// Every output is summed by one thread in a fixed order (taps, then input
// channels), so results do not depend on the thread count.

#include <cstdint>

#include "backplane/dtype.h"
#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {

enum class ConvIsa { generic, avx2, avx512 };

// The GEMM and conversion (convert.h) variant of the same instructions.
constexpr GemmIsa gemm_isa_of(ConvIsa isa) {
  return isa == ConvIsa::avx512 ? GemmIsa::avx512 : isa == ConvIsa::avx2 ? GemmIsa::avx2 : GemmIsa::generic;
}

const char* conv_isa_name(ConvIsa isa);  // "generic", "avx2", "avx512"
// Whether this build has the variant and this CPU can run it (hardware only:
// the CPU-capability cap is the caller's check).
bool conv_isa_supported(ConvIsa isa);

// A forward convolution's geometry, per spatial axis (D, H, W; unused axes 1).
struct ConvShape {
  int64_t n, c, k, groups;
  int64_t in[3], kernel[3], out[3], stride[3], pad[3], dilation[3];
};

// out = conv(x, w) + bias. x: dense [n][in D][in H][in W][c]; w: dense
// [k][c / groups][kernel D][kernel H][kernel W] (PyTorch's order); bias: [k]
// or null; out: dense [n][out D][out H][out W][k]. Packs the weight into a
// workspace of its own on every call.
void direct_conv_f32(ConvIsa isa, const ConvShape& s, const float* x, const float* w, const float* bias, float* out);

// Depthwise (groups == c == k) on NCDHW data: x dense [n][c][d][h][w], out
// dense [n][k][od][oh][ow], both of `dtype` (f32, bf16 or f16: Note [16-bit
// depthwise planes], sums in fp32); weight and bias fp32 as above. Vectors
// along W, so no transposition to channels-last and back.
void direct_depthwise_nchw(ConvIsa isa, const ConvShape& s, DType dtype, const void* x, const float* w,
                           const float* bias, void* out);

namespace detail {
void depthwise_nchw_generic(const ConvShape& s, DType dtype, const void* x, const float* w, const float* bias, void* out);
void depthwise_nchw_avx2(const ConvShape& s, DType dtype, const void* x, const float* w, const float* bias, void* out);
void depthwise_nchw_avx512(const ConvShape& s, DType dtype, const void* x, const float* w, const float* bias, void* out);
void direct_conv_f32_generic(const ConvShape& s, const float* x, const float* w, const float* bias, float* out);
void direct_conv_f32_avx2(const ConvShape& s, const float* x, const float* w, const float* bias, float* out);
void direct_conv_f32_avx512(const ConvShape& s, const float* x, const float* w, const float* bias, float* out);
}  // namespace detail

}  // namespace bp::kernels::cpu
