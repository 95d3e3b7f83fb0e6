#pragma once
// Out-of-place transposes of fp32 matrices: dst[j * ld_dst + i] =
// src[i * ld_src + j] for i < rows, j < cols. The convolutions' layout
// staging (NCHW <-> channels-last, src/ops/conv/layout.cpp) moves whole
// activations through it: a scalar blocked loop ran at about 5 GB/s (3.6 of
// a 4.4 ms depthwise layer whose kernel takes 0.8 ms); 8 x 8 register
// transposes on AVX2 move several times that.

#include <cstdint>

namespace bp::kernels::cpu {

// The widest variant the hardware has (AVX2 or the portable loop).
void transpose_f32(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst);

// The variants, for the dispatcher and the tests.
void transpose_f32_generic(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst);
void transpose_f32_avx2(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst);

}  // namespace bp::kernels::cpu
