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

constexpr int64_t kPairs = 6;

// The tile: V 16-lane vectors (a panel of 16 V rows of X) times R rows of
// W, over k-blocks of G groups (G * 6 pair rows of 64 V bytes in L1).
template <int V, int R, int G>
struct Tile {
  static constexpr int kVecs = V;
  static constexpr int64_t kWidth = 16 * V;
  static constexpr int kRows = R;
  static constexpr int64_t kGroups = G;
  static constexpr int64_t kPairStride = 2 * kWidth;  // uint16 per packed pair row
};

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
void pack_x(const Sparse24Input& x, bool x_f32, int64_t k, int64_t groups, int64_t kWidth, uint16_t* xq) {
  const int64_t kPairStride = 2 * kWidth;
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

template <int R, int kVecs>
void tile(const uint16_t* const* vals, const uint8_t* const* meta, int64_t g0, int64_t ng, const uint16_t* xq,
          float* acc, bool first) {
  constexpr int64_t kWidth = 16 * kVecs, kPairStride = 2 * kWidth;
  __m512 a[R][kVecs];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVecs; ++v) a[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + r * kWidth + 16 * v);
  // Two groups per step: one metadata byte holds both codes (g0 and ng are even).
  constexpr int64_t kGroupStride = kPairs * kPairStride;
  const uint16_t* xg = xq + g0 * kGroupStride;
  for (int64_t g = g0; g < g0 + ng; g += 2, xg += 2 * kGroupStride) {
#pragma GCC unroll 16  // the accumulators must stay in registers
    for (int r = 0; r < R; ++r) {
      const unsigned byte = meta[r][g >> 1];
      const uint16_t* p0 = xg + kPairOfCode[byte & 15u] * kPairStride;
      const uint16_t* p1 = xg + kGroupStride + kPairOfCode[byte >> 4] * kPairStride;
      int32_t pair0, pair1;  // (first, second) in the lane's (low, high) halves
      std::memcpy(&pair0, vals[r] + 2 * g, sizeof pair0);
      std::memcpy(&pair1, vals[r] + 2 * g + 2, sizeof pair1);
      const __m512bh b0 = (__m512bh)_mm512_set1_epi32(pair0), b1 = (__m512bh)_mm512_set1_epi32(pair1);
#pragma GCC unroll 16
      for (int v = 0; v < kVecs; ++v)
        a[r][v] = _mm512_dpbf16_ps(a[r][v], b0, (__m512bh)_mm512_loadu_si512(p0 + 32 * v));
#pragma GCC unroll 16
      for (int v = 0; v < kVecs; ++v)
        a[r][v] = _mm512_dpbf16_ps(a[r][v], b1, (__m512bh)_mm512_loadu_si512(p1 + 32 * v));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVecs; ++v) _mm512_storeu_ps(acc + r * kWidth + 16 * v, a[r][v]);
}

template <int R, int kVecs>
void tile_rows(const uint16_t* values, int64_t values_rs, const Sparse24& w, int64_t j, int64_t g0, int64_t ng,
               const uint16_t* xq, float* acc, bool first) {
  const uint16_t* vals[R];
  const uint8_t* meta[R];
  for (int r = 0; r < R; ++r) {
    vals[r] = values + (j + r) * values_rs;
    meta[r] = w.meta + (j + r) * w.meta_rs;
  }
  tile<R, kVecs>(vals, meta, g0, ng, xq, acc, first);
}

template <class T>
void run(const Sparse24& w, bool values_f32, const Sparse24Input& x, bool x_f32, float* c, int64_t crs,
         int64_t ccs) {
  constexpr int kVecs = T::kVecs, kRows = T::kRows;
  constexpr int64_t kWidth = T::kWidth, kGroupsBf16 = T::kGroups, kPairStride = T::kPairStride;
  const int64_t g = groups_of(w.k);
  const int64_t panels = (x.m + kWidth - 1) / kWidth, per_panel = g * kPairs * kPairStride;
  StoragePtr packed = allocate_storage(Device::cpu(), static_cast<std::size_t>(panels * per_panel) * sizeof(uint16_t));
  uint16_t* xq = static_cast<uint16_t*>(packed->data());
  pack_x(x, x_f32, w.k, g, kWidth, xq);
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
  for_each_task(w.n, x.m, kWidth, static_cast<int64_t>(panels * per_panel * sizeof(uint16_t)), [&](int64_t block, int64_t panel) {
    alignas(64) float acc[kBlockRows * kWidth];
    const int64_t j0 = block * kBlockRows, rows = std::min(kBlockRows, w.n - j0);
    const uint16_t* panel_x = xq + panel * per_panel;
    for (int64_t g0 = 0; g0 < g; g0 += kGroupsBf16) {
      const int64_t ng = std::min(kGroupsBf16, g - g0);
      int64_t jj = 0;
      for (; jj + kRows <= rows; jj += kRows)
        tile_rows<kRows, kVecs>(values, values_rs, w, j0 + jj, g0, ng, panel_x, acc + jj * kWidth, g0 == 0);
      for (; jj < rows; ++jj) tile_rows<1, kVecs>(values, values_rs, w, j0 + jj, g0, ng, panel_x, acc + jj * kWidth, g0 == 0);
    }
    store_block(acc, rows, kWidth, j0, panel * kWidth, x.m, c, crs, ccs);
  });
}

}  // namespace

// 4 vectors x 4 rows over k-blocks of 128 groups: the fastest of the shapes
// tried at 4096 x 4096 x 256 (as the f32 kernel's); narrower panels for few
// rows of X.
void sparse24_bf16_avx512(const Sparse24& w, bool values_f32, const Sparse24Input& x, bool x_f32, float* c,
                          int64_t crs, int64_t ccs) {
  if (x.m <= 16) return run<Tile<1, 8, 256>>(w, values_f32, x, x_f32, c, crs, ccs);
  if (x.m <= 32) return run<Tile<2, 8, 128>>(w, values_f32, x, x_f32, c, crs, ccs);
  run<Tile<4, 4, 128>>(w, values_f32, x, x_f32, c, crs, ccs);
}

}  // namespace bp::kernels::cpu
