// sparse24_bf16_avx512: the bf16 2:4 kernel (sparse24.h, blocking in
// sparse24_blocking.h). The two stored entries of a group are a pair, and
// vdpbf16ps multiplies a pair by a pair in each 32-bit lane: so X is packed
// with, per group of 4 of its columns, all 6 column pairs a < b interleaved
// (X(r, a), X(r, b)), and one instruction per group and 16 rows of X does
// the group's two multiplies, the 4-bit code naming the pair to read.

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "backplane/tensor.h"
#include "kernels/cpu/sparse24.h"
#include "kernels/cpu/sparse24_blocking.h"

namespace bp::kernels::cpu {
namespace {

constexpr int kVecs = 8;                // 16-lane vectors per tile row
constexpr int64_t kWidth = 16 * kVecs;  // rows of X per panel
constexpr int kRows = 2;                // rows of W per register tile
constexpr int64_t kPairs = 6;
constexpr int64_t kGroupsBf16 = 8;  // 8 groups of 6 pairs of 128 rows: 24 KiB of packed X per k-block
constexpr int64_t kPairStride = 2 * kWidth;  // uint16 per packed pair row

// The pair of columns (a, b) of each code a | b << 2 with a < b; other codes
// do not occur (Note [2:4 CPU layout]) and read pair 0.
constexpr int kPairOfCode[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 2, 4, 5, 0};
constexpr int kPairCols[kPairs][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};

// fp32 -> bf16 bits, round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

inline uint16_t x_bits(const Sparse24Input& x, bool x_f32, int64_t r, int64_t c) {
  const int64_t at = r * x.rs + c * x.cs;
  return x_f32 ? to_bf16(static_cast<const float*>(x.data)[at]) : static_cast<const uint16_t*>(x.data)[at];
}

// Xq[panel][group][pair][kWidth][2] (uint16), zero past m and k.
void pack_x(const Sparse24Input& x, bool x_f32, int64_t k, int64_t groups, uint16_t* xq) {
  const int64_t panels = (x.m + kWidth - 1) / kWidth, per_panel = groups * kPairs * kPairStride;
  const int team = threads::team_size(panels);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t p = 0; p < panels; ++p) {
    uint16_t* dst = xq + p * per_panel;
    const int64_t r0 = p * kWidth, rows = std::min(kWidth, x.m - r0);
    std::fill(dst, dst + per_panel, uint16_t{0});
    for (int64_t rr = 0; rr < rows; ++rr)
      for (int64_t gi = 0; gi < groups; ++gi) {
        uint16_t q[4];
        for (int i = 0; i < 4; ++i) q[i] = 4 * gi + i < k ? x_bits(x, x_f32, r0 + rr, 4 * gi + i) : uint16_t{0};
        uint16_t* out = dst + gi * kPairs * kPairStride + 2 * rr;
        for (int pair = 0; pair < kPairs; ++pair) {
          out[pair * kPairStride] = q[kPairCols[pair][0]];
          out[pair * kPairStride + 1] = q[kPairCols[pair][1]];
        }
      }
  }
}

template <int R>
void tile(const uint16_t* const* vals, const uint8_t* const* meta, int64_t g0, int64_t ng, const uint16_t* xq,
          float* acc, bool first) {
  __m512 a[R][kVecs];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVecs; ++v) a[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + r * kWidth + 16 * v);
  const uint16_t* xg = xq + g0 * kPairs * kPairStride;
  for (int64_t g = g0; g < g0 + ng; ++g, xg += kPairs * kPairStride) {
    for (int r = 0; r < R; ++r) {
      const uint16_t* p = xg + kPairOfCode[code_of(meta[r], g)] * kPairStride;
      uint32_t pair;
      std::memcpy(&pair, vals[r] + 2 * g, sizeof pair);  // (first, second) in the lane's (low, high) halves
      const __m512bh b = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
      for (int v = 0; v < kVecs; ++v)
        a[r][v] = _mm512_dpbf16_ps(a[r][v], b, (__m512bh)_mm512_loadu_si512(p + 32 * v));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVecs; ++v) _mm512_storeu_ps(acc + r * kWidth + 16 * v, a[r][v]);
}

template <int R>
void tile_rows(const uint16_t* values, int64_t values_rs, const Sparse24& w, int64_t j, int64_t g0, int64_t ng,
               const uint16_t* xq, float* acc, bool first) {
  const uint16_t* vals[R];
  const uint8_t* meta[R];
  for (int r = 0; r < R; ++r) {
    vals[r] = values + (j + r) * values_rs;
    meta[r] = w.meta + (j + r) * w.meta_rs;
  }
  tile<R>(vals, meta, g0, ng, xq, acc, first);
}

}  // namespace

void sparse24_bf16_avx512(const Sparse24& w, bool values_f32, const Sparse24Input& x, bool x_f32, float* c,
                          int64_t crs, int64_t ccs) {
  const int64_t g = groups_of(w.k);
  const int64_t panels = (x.m + kWidth - 1) / kWidth, per_panel = g * kPairs * kPairStride;
  StoragePtr packed = allocate_storage(Device::cpu(), static_cast<std::size_t>(panels * per_panel) * sizeof(uint16_t));
  uint16_t* xq = static_cast<uint16_t*>(packed->data());
  pack_x(x, x_f32, w.k, g, xq);
  // f32 values are rounded once per call (not per panel), row by row.
  const uint16_t* values = static_cast<const uint16_t*>(w.values);
  int64_t values_rs = w.values_rs;
  StoragePtr rounded;
  if (values_f32) {
    rounded = allocate_storage(Device::cpu(), static_cast<std::size_t>(w.n * 2 * g) * sizeof(uint16_t));
    uint16_t* dst = static_cast<uint16_t*>(rounded->data());
    const float* src = static_cast<const float*>(w.values);
    const int team = threads::team_size(w.n);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
    for (int64_t j = 0; j < w.n; ++j)
      for (int64_t i = 0; i < 2 * g; ++i) dst[j * 2 * g + i] = to_bf16(src[j * w.values_rs + i]);
    values = dst;
    values_rs = 2 * g;
  }
  for_each_task(w.n, x.m, kWidth, [&](int64_t block, int64_t panel) {
    alignas(64) float acc[kBlockRows * kWidth];
    const int64_t j0 = block * kBlockRows, rows = std::min(kBlockRows, w.n - j0);
    const uint16_t* panel_x = xq + panel * per_panel;
    for (int64_t g0 = 0; g0 < g; g0 += kGroupsBf16) {
      const int64_t ng = std::min(kGroupsBf16, g - g0);
      int64_t jj = 0;
      for (; jj + kRows <= rows; jj += kRows)
        tile_rows<kRows>(values, values_rs, w, j0 + jj, g0, ng, panel_x, acc + jj * kWidth, g0 == 0);
      for (; jj < rows; ++jj) tile_rows<1>(values, values_rs, w, j0 + jj, g0, ng, panel_x, acc + jj * kWidth, g0 == 0);
    }
    store_block(acc, rows, kWidth, j0, panel * kWidth, x.m, c, crs, ccs);
  });
}

}  // namespace bp::kernels::cpu
