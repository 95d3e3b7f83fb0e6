// transpose_f32 (transpose.h): the portable variant and the dispatcher.

#include "kernels/cpu/transpose.h"

#include <algorithm>

#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {

void transpose_f32_generic(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
  constexpr int64_t kBlock = 32;  // blocks whose source and destination lines stay in L1
  for (int64_t i0 = 0; i0 < rows; i0 += kBlock)
    for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
      const int64_t i1 = std::min(rows, i0 + kBlock), j1 = std::min(cols, j0 + kBlock);
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i) dst[j * ld_dst + i] = src[i * ld_src + j];
    }
}

void transpose_f32(const float* src, int64_t rows, int64_t cols, int64_t ld_src, float* dst, int64_t ld_dst) {
  static const bool avx2 = gemm_isa_supported(GemmIsa::avx2);
  if (avx2) transpose_f32_avx2(src, rows, cols, ld_src, dst, ld_dst);
  else transpose_f32_generic(src, rows, cols, ld_src, dst, ld_dst);
}

}  // namespace bp::kernels::cpu
