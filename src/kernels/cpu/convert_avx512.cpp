// The AVX-512 bodies of the fp32 <-> 16-bit conversions (convert.h).

#include <immintrin.h>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/round16_avx512.h"

namespace bp::kernels::cpu {

namespace {

// Whole vectors through round16_avx512.h (shared with the GEMM's rounding
// epilogue, so both give the same bits); the tail through the generic body.
template <class Round>
void round_vectors(const float* src, uint16_t* dst, int64_t n, void (*tail)(const float*, uint16_t*, int64_t)) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), Round::round(_mm512_loadu_ps(src + i)));
  tail(src + i, dst + i, n - i);
}

}  // namespace

void round_f32_to_bf16_avx512(const float* src, uint16_t* dst, int64_t n) {
  round_vectors<detail::RoundToBf16>(src, dst, n, &round_f32_to_bf16_generic);
}

void round_f32_to_f16_avx512(const float* src, uint16_t* dst, int64_t n) {
  round_vectors<detail::RoundToF16>(src, dst, n, &round_f32_to_f16_generic);
}

void widen_bf16_to_f32_avx512(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {  // a bf16 is the high half of its fp32
    const __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(h, 16)));
  }
  widen_bf16_to_f32_generic(src + i, dst + i, n - i);
}

void widen_f16_to_f32_avx512(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
  widen_f16_to_f32_generic(src + i, dst + i, n - i);
}

}  // namespace bp::kernels::cpu
