#pragma once
// 8 x 8 transpose of 32-bit lanes (fp32, or bf16 pairs) in ymm registers:
// r[i] (row i, 8 columns) becomes r[j] (column j, the 8 rows). For files
// compiled with AVX (the AVX2 and AVX-512 ones): the GEMM packers of
// row-major A and the plane transposes of transpose_avx2.cpp. Anonymous
// namespace for the reason given in gemm_pack.h.

#include <immintrin.h>

namespace bp::kernels::cpu::detail {
namespace {

inline void transpose8x8(__m256 (&r)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3 (h = 0) and 4-7 (h = 1)
    u[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
    u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
    u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
    u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
    r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
  }
}

}  // namespace
}  // namespace bp::kernels::cpu::detail
