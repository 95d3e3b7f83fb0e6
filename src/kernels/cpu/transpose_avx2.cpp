// transpose_f32 (transpose.h) on AVX2: 8 x 8 tiles through ymm registers,
// visited 32 x 32 elements at a time so the 32 source and 32 destination
// lines of a block stay in L1; the ragged edges element by element.

#include <algorithm>

#include "kernels/cpu/transpose.h"
#include "kernels/cpu/transpose8x8_avx.h"

namespace bp::kernels::cpu {

void transpose_f32_avx2(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
  constexpr int64_t kBlock = 32;
  const int64_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  for (int64_t i0 = 0; i0 < rows8; i0 += kBlock)
    for (int64_t j0 = 0; j0 < cols8; j0 += kBlock) {
      const int64_t i1 = std::min(rows8, i0 + kBlock), j1 = std::min(cols8, j0 + kBlock);
      for (int64_t i = i0; i < i1; i += 8)
        for (int64_t j = j0; j < j1; j += 8) {
          __m256 r[8];
          for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(src + (i + k) * ld_src + j);
          detail::transpose8x8(r);
          for (int k = 0; k < 8; ++k) _mm256_storeu_ps(dst + (j + k) * ld_dst + i, r[k]);
        }
    }
  // The edges: the last cols % 8 columns of every row, the last rows % 8 rows.
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = i < rows8 ? cols8 : 0; j < cols; ++j) dst[j * ld_dst + i] = src[i * ld_src + j];
}

}  // namespace bp::kernels::cpu
