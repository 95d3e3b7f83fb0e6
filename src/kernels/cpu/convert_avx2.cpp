// The AVX2 + F16C bodies of the fp32 <-> 16-bit conversions (convert.h).

#include <immintrin.h>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/convert_blocks.h"

namespace bp::kernels::cpu {

// Eight floats to eight bf16 bit patterns in the low 128 bits: round to
// nearest even on the bit pattern, NaN quieted with its sign kept.
static inline __m128i bf16x8(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x8000)),
                                        _mm256_set1_epi32(0x7FC0));  // the canonical quiet NaN, sign kept
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  const __m256i bits = _mm256_blendv_epi8(rounded, quiet, nan);
  // 32 -> 16 bits: the values fit, so an unsigned-saturating pack keeps them.
  const __m256i packed = _mm256_packus_epi32(bits, bits);  // per 128-bit lane
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

void round_f32_to_bf16_avx2(const float* src, uint16_t* dst, int64_t n) {
  detail::convert_by_blocks<8>(src, dst, n, [](const float* s, uint16_t* d) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), bf16x8(_mm256_loadu_ps(s)));
  });
}

void round_f32_to_f16_avx2(const float* src, uint16_t* dst, int64_t n) {
  detail::convert_by_blocks<8>(src, dst, n, [](const float* s, uint16_t* d) {
    const __m256 x = _mm256_loadu_ps(s);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    // vcvtps2ph keeps a NaN's payload; the canonical NaN is written instead (rare: a scalar pass).
    if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) round_f32_to_f16_generic(s, d, 8);
  });
}

void widen_bf16_to_f32_avx2(const uint16_t* src, float* dst, int64_t n) {
  detail::convert_by_blocks<8>(src, dst, n, [](const uint16_t* s, float* d) {  // a bf16 is the high half of its fp32
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    _mm256_storeu_ps(d, _mm256_castsi256_ps(_mm256_slli_epi32(h, 16)));
  });
}

void widen_f16_to_f32_avx2(const uint16_t* src, float* dst, int64_t n) {
  detail::convert_by_blocks<8>(src, dst, n, [](const uint16_t* s, float* d) {
    _mm256_storeu_ps(d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s))));
  });
}

}  // namespace bp::kernels::cpu
