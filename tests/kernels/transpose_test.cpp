// transpose_f32 (src/kernels/cpu/transpose.h): every variant against a plain
// loop over sizes around the 8 x 8 tiles and 32 x 32 blocks, with leading
// dimensions wider than the matrices; nothing outside the destination
// matrix is written, and NaN and infinities move like any value.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/transpose.h"

namespace {

using Fn = void (*)(const float*, int64_t, int64_t, int64_t, float*, int64_t);

std::vector<std::pair<const char*, Fn>> variants() {
  std::vector<std::pair<const char*, Fn>> v{{"generic", bp::kernels::cpu::transpose_f32_generic},
                                            {"dispatch", bp::kernels::cpu::transpose_f32}};
  if (bp::kernels::cpu::gemm_isa_supported(bp::kernels::cpu::GemmIsa::avx2))
    v.push_back({"avx2", bp::kernels::cpu::transpose_f32_avx2});
  return v;
}

TEST(Transpose, MatchesThePlainLoopAtTileEdges) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t sizes[] = {1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 64, 65, 100};
  for (const auto& [name, fn] : variants())
    for (int64_t rows : sizes)
      for (int64_t cols : sizes) {
        const int64_t ld_src = cols + 3, ld_dst = rows + 5;
        std::vector<float> src(static_cast<size_t>(rows * ld_src));
        for (float& x : src) x = dist(rng);
        src[0] = std::numeric_limits<float>::quiet_NaN();
        if (src.size() > 1) src[src.size() - 1] = -std::numeric_limits<float>::infinity();
        const float sentinel = 12345.0f;
        std::vector<float> dst(static_cast<size_t>(cols * ld_dst), sentinel);
        fn(src.data(), rows, cols, ld_src, dst.data(), ld_dst);
        for (int64_t j = 0; j < cols; ++j)
          for (int64_t i = 0; i < ld_dst; ++i) {
            const float got = dst[static_cast<size_t>(j * ld_dst + i)];
            if (i >= rows) {
              ASSERT_EQ(got, sentinel) << name << " wrote outside the matrix at " << rows << "x" << cols;
              continue;
            }
            const float want = src[static_cast<size_t>(i * ld_src + j)];
            if (std::isnan(want)) ASSERT_TRUE(std::isnan(got)) << name;
            else ASSERT_EQ(got, want) << name << " " << rows << "x" << cols << " at (" << i << ", " << j << ")";
          }
      }
}

}  // namespace
