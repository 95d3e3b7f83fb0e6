#pragma once
// Winograd F(4x4, 3x3) convolution (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016) on channels-last fp32 data, one
// variant per ISA (conv_winograd_<isa>.cpp over conv_winograd_impl.h).
//
// Each 4x4 block of outputs ("tile") is A^T [(G g G^T) . (B^T d B)] A, with
// d the 6x6 input patch and g a 3x3 kernel: 36 multiplies per tile and
// channel pair where direct convolution needs 144, so 2.25 instead of 9 per
// output. Done as: transform the weight (U, 36 matrices C x K), transform
// the input tiles (V, 36 matrices tiles x C), 36 GEMMs M = V U on
// Backplane's GEMM kernels, transform M back into the output (plus bias).
// Tiles are processed a block at a time so V and M stay in cache: a block
// per thread in its L2 where there are many tiles, else one block at a time
// with its 36 GEMMs shared out to the threads (Note [Winograd thread
// blocks] in conv_winograd_impl.h). Every output is summed by
// one thread in a fixed order, so results do not depend on the thread count.
// The transforms add rounding: errors are a few times those of a direct sum.

#include <cstdint>

#include "kernels/cpu/conv_direct.h"

namespace bp::kernels::cpu {

// out = conv(x, w) + bias for a 3x3 kernel, unit stride and dilation, one
// group, 2-D (s.in[0] == s.kernel[0] == 1), any padding. Layouts as
// direct_conv_f32 (conv_direct.h). With `u_ready` (the transformed weight
// winograd_transform_weight_f32 made for the same isa and shape) the weight
// transform is skipped and w is not read; without, it is done in this call.
void winograd_f4x3_f32(ConvIsa isa, const ConvShape& s, const float* x, const float* w, const float* bias,
                       float* out, const float* u_ready = nullptr);

// The transformed weight U = G g G^T of every channel pair, as a call uses
// it: [36][Cp][Kp] floats, channels padded with zeros to the isa's vector
// width. winograd_weight_floats says how many floats u must hold.
int64_t winograd_weight_floats(ConvIsa isa, const ConvShape& s);
void winograd_transform_weight_f32(ConvIsa isa, const ConvShape& s, const float* w, float* u);

namespace detail {
void winograd_f4x3_f32_generic(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                               const float* u_ready);
void winograd_f4x3_f32_avx2(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                            const float* u_ready);
void winograd_f4x3_f32_avx512(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                              const float* u_ready);
void winograd_transform_weight_f32_generic(const ConvShape& s, const float* w, float* u);
void winograd_transform_weight_f32_avx2(const ConvShape& s, const float* w, float* u);
void winograd_transform_weight_f32_avx512(const ConvShape& s, const float* w, float* u);
int64_t winograd_weight_floats_generic(const ConvShape& s);
int64_t winograd_weight_floats_avx2(const ConvShape& s);
int64_t winograd_weight_floats_avx512(const ConvShape& s);
}  // namespace detail

}  // namespace bp::kernels::cpu
