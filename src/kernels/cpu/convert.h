#pragma once
// Rounding fp32 results to 16-bit floats, vectorised per ISA: the last step
// of every f16/bf16 product (matmul accumulates in fp32, then rounds); and
// the exact widening of 16-bit floats to fp32 that kernels computing in
// fp32 stage their operands with (conv's channels-last copies).
// Round to nearest, ties to even; a NaN becomes the canonical quiet NaN
// with its sign; overflow gives infinity; subnormals round exactly. The same
// bits as bp::bfloat16_from_float / half_from_float (tests compare them),
// which were out of line and through double when a native bf16 matmul at
// n=256 spent up to half its time in them; they are inline bit arithmetic now
// (core's tensor copies use them), but the variants here still convert whole
// vectors with the ISA's own instructions where it has them.

#include <cstdint>

#include "backplane/dtype.h"
#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {

// dst[i] = round(src[i]) for i < n, with the widest variant `isa` allows
// (avx512_bf16 uses the avx512 one: vcvtneps2bf16 flushes subnormals).
void round_f32_to_bf16(GemmIsa isa, const float* src, uint16_t* dst, int64_t n);
void round_f32_to_f16(GemmIsa isa, const float* src, uint16_t* dst, int64_t n);

// dst[i] = src[i] as fp32, exactly (a NaN stays a NaN).
void widen_bf16_to_f32(GemmIsa isa, const uint16_t* src, float* dst, int64_t n);
void widen_f16_to_f32(GemmIsa isa, const uint16_t* src, float* dst, int64_t n);

// The same for dtype bf16 or f16, over n elements shared out to the
// caller's threads in chunks of 16 Ki elements. One chunk needs no parallel
// region: even with if(false), entering one allocates and frees a team and
// wakes a futex (a third of a batch of 256 1x1 bf16 matmuls).
void round_f32_to(DType dtype, GemmIsa isa, const float* src, uint16_t* dst, int64_t n);
void widen_to_f32(DType dtype, GemmIsa isa, const uint16_t* src, float* dst, int64_t n);

// The body the functions above run for dtype (bf16 or f16) and isa,
// resolved once for a loop over many short rows (a call per row through
// the dispatch above cost a few per cent of conv's NCHW bf16 staging).
using RoundFn = void (*)(const float*, uint16_t*, int64_t);
using WidenFn = void (*)(const uint16_t*, float*, int64_t);
RoundFn round_variant(DType dtype, GemmIsa isa);
WidenFn widen_variant(DType dtype, GemmIsa isa);

// The per-ISA bodies (convert_<isa>.cpp), for the dispatchers and the tests.
void round_f32_to_bf16_generic(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_f16_generic(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_bf16_avx2(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_f16_avx2(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_bf16_avx512(const float* src, uint16_t* dst, int64_t n);
void round_f32_to_f16_avx512(const float* src, uint16_t* dst, int64_t n);
void widen_bf16_to_f32_generic(const uint16_t* src, float* dst, int64_t n);
void widen_f16_to_f32_generic(const uint16_t* src, float* dst, int64_t n);
void widen_bf16_to_f32_avx2(const uint16_t* src, float* dst, int64_t n);
void widen_f16_to_f32_avx2(const uint16_t* src, float* dst, int64_t n);
void widen_bf16_to_f32_avx512(const uint16_t* src, float* dst, int64_t n);
void widen_f16_to_f32_avx512(const uint16_t* src, float* dst, int64_t n);

}  // namespace bp::kernels::cpu
