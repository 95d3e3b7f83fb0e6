#pragma once
// One zmm of 16 fp32 values rounded to bf16 or f16 bits, for files compiled
// with AVX-512 flags: convert_avx512.cpp's loops and the GEMM micro-kernel's
// rounding epilogue (Note [GEMM rounding epilogue] in gemm.cpp), which must
// give the same bits. Round to nearest, ties to even; a NaN becomes the
// canonical quiet NaN with its sign, as convert.h's generic bodies do.
// (vcvtneps2bf16 would be one instruction but flushes subnormals.)
// Anonymous namespace for the reason given in gemm_pack.h.

#include <immintrin.h>

namespace bp::kernels::cpu::detail {
namespace {

struct RoundToBf16 {
  static __m256i round(__m512 x) {
    const __m512i u = _mm512_castps_si512(x);
    const __m512i hi = _mm512_srli_epi32(u, 16);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), _mm512_and_si512(hi, _mm512_set1_epi32(1))),
        16);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    const __m512i bits = _mm512_mask_or_epi32(rounded, nan, _mm512_and_si512(hi, _mm512_set1_epi32(0x8000)),
                                              _mm512_set1_epi32(0x7FC0));
    // The zero-masked form: the plain one passes an undefined vector through,
    // which GCC 12 reports as maybe-uninitialized once this is inlined.
    return _mm512_maskz_cvtepi32_epi16(static_cast<__mmask16>(0xFFFF), bits);
  }
};

struct RoundToF16 {
  static __m256i round(__m512 x) {
    const __m256i h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    if (nan == 0) return h;
    // vcvtps2ph keeps a NaN's payload; write the canonical one, sign kept.
    const __m256i sign = _mm256_and_si256(_mm512_maskz_cvtepi32_epi16(static_cast<__mmask16>(0xFFFF),
                                                                      _mm512_srli_epi32(_mm512_castps_si512(x), 16)),
                                          _mm256_set1_epi16(static_cast<short>(0x8000)));
    return _mm256_mask_blend_epi16(nan, h, _mm256_or_si256(sign, _mm256_set1_epi16(0x7E00)));
  }
};

}  // namespace
}  // namespace bp::kernels::cpu::detail
