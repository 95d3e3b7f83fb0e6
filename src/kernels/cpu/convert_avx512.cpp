// The AVX-512 bodies of the fp32 -> 16-bit roundings (convert.h).

#include <immintrin.h>

#include "kernels/cpu/convert.h"

namespace bp::kernels::cpu {

void round_f32_to_bf16_avx512(const float* src, uint16_t* dst, int64_t n) {
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7FFF);
  const __m512i sign = _mm512_set1_epi32(0x8000), quiet_nan = _mm512_set1_epi32(0x7FC0);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(src + i);
    const __m512i u = _mm512_castps_si512(x);
    const __m512i hi = _mm512_srli_epi32(u, 16);
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, bias), _mm512_and_si512(hi, one)), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    // A NaN becomes the canonical quiet NaN with its sign.
    const __m512i bits = _mm512_mask_or_epi32(rounded, nan, _mm512_and_si512(hi, sign), quiet_nan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_cvtepi32_epi16(bits));
  }
  round_f32_to_bf16_generic(src + i, dst + i, n - i);
}

void round_f32_to_f16_avx512(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(src + i);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    // vcvtps2ph keeps a NaN's payload; the canonical NaN is written instead (rare: a scalar pass).
    if (_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q)) round_f32_to_f16_generic(src + i, dst + i, 16);
  }
  round_f32_to_f16_generic(src + i, dst + i, n - i);
}

}  // namespace bp::kernels::cpu
