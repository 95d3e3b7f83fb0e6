// The AVX-512 bodies of the fp32 -> 16-bit roundings (convert.h).

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

}  // namespace bp::kernels::cpu
