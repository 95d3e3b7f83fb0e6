#pragma once
// Rounding fp32 results to 16-bit floats, vectorised per ISA: the last step
// of every f16/bf16 product (matmul accumulates in fp32, then rounds).
// Round to nearest, ties to even; a NaN becomes the canonical quiet NaN
// with its sign; overflow gives infinity; subnormals round exactly. The same
// bits as
// bp::bfloat16_from_float / half_from_float (tests compare them), at a
// fraction of the cost: those are out of line, through double, one element
// at a time, and took up to half the time of a native bf16 matmul at n=256.

#include <cstdint>

#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {

// dst[i] = round(src[i]) for i < n, with the widest variant `isa` allows
// (avx512_bf16 uses the avx512 one: vcvtneps2bf16 flushes subnormals).
void round_f32_to_bf16(GemmIsa isa, const float* src, uint16_t* dst, int64_t n);
void round_f32_to_f16(GemmIsa isa, const float* src, uint16_t* dst, int64_t n);

// The per-ISA bodies (convert_<isa>.cpp), for the dispatcher and the tests.
void round_f32_to_bf16_generic(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_f16_generic(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_bf16_avx2(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_f16_avx2(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_bf16_avx512(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_f16_avx512(const float* src, uint16_t* dst, int64_t n);

}  // namespace bp::kernels::cpu
