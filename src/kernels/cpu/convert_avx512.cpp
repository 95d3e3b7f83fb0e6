// The AVX-512 bodies of the fp32 <-> 16-bit conversions (convert.h).

#include <immintrin.h>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/convert_blocks.h"
#include "kernels/cpu/round16_avx512.h"

namespace bp::kernels::cpu {

namespace {

// Through round16_avx512.h, shared with the GEMM's rounding epilogue, so
// both give the same bits.
template <class Round>
void round_vectors(const float* src, uint16_t* dst, int64_t n) {
  detail::convert_by_blocks<16>(src, dst, n, [](const float* s, uint16_t* d) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), Round::round(_mm512_loadu_ps(s)));
  });
}

}  // namespace

void round_f32_to_bf16_avx512(const float* src, uint16_t* dst, int64_t n) {
  round_vectors<detail::RoundToBf16>(src, dst, n);
}

void round_f32_to_f16_avx512(const float* src, uint16_t* dst, int64_t n) {
  round_vectors<detail::RoundToF16>(src, dst, n);
}

void widen_bf16_to_f32_avx512(const uint16_t* src, float* dst, int64_t n) {
  detail::convert_by_blocks<16>(src, dst, n, [](const uint16_t* s, float* d) {  // a bf16 is the high half of its fp32
    const __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    _mm512_storeu_ps(d, _mm512_castsi512_ps(_mm512_slli_epi32(h, 16)));
  });
}

void widen_f16_to_f32_avx512(const uint16_t* src, float* dst, int64_t n) {
  detail::convert_by_blocks<16>(src, dst, n, [](const uint16_t* s, float* d) {
    _mm512_storeu_ps(d, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s))));
  });
}

}  // namespace bp::kernels::cpu
