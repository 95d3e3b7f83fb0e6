// sparse24_f32_avx512: the fp32 2:4 kernel (sparse24.h, blocking in
// sparse24_blocking.h). Per group and stored entry: one broadcast and four
// FMAs whose memory operand is the packed X row the metadata names.

#include <immintrin.h>

#include <vector>

#include "backplane/tensor.h"
#include "kernels/cpu/sparse24.h"
#include "kernels/cpu/sparse24_blocking.h"

namespace bp::kernels::cpu {
namespace {

// The tile: V 16-lane vectors (a panel of 16 V rows of X) times R rows of
// W, over k-blocks of G groups (4 G packed rows of 64 V bytes in L1).
template <int V, int R, int G>
struct Tile {
  static constexpr int kVecs = V;
  static constexpr int64_t kWidth = 16 * V;
  static constexpr int kRows = R;
  static constexpr int64_t kGroups = G;
};

// Xp[panel][row c < kp][kWidth]: X(r0 + rr, c), zero past m and k.
void pack_x(const Sparse24Input& x, int64_t k, int64_t kp, int64_t kWidth, float* xp) {
  const float* src = static_cast<const float*>(x.data);
  const int64_t panels = (x.m + kWidth - 1) / kWidth;
  const int team = threads::team_size(panels);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t p = 0; p < panels; ++p) {
    float* dst = xp + p * kp * kWidth;
    const int64_t r0 = p * kWidth, rows = std::min(kWidth, x.m - r0);
    std::fill(dst, dst + kp * kWidth, 0.0f);
    for (int64_t rr = 0; rr < rows; ++rr) {
      const float* row = src + (r0 + rr) * x.rs;
      for (int64_t c = 0; c < k; ++c) dst[c * kWidth + rr] = row[c * x.cs];
    }
  }
}

// acc[R rows][kWidth] += the groups [g0, g0 + ng) of R rows of W times the packed X.
template <int R, int kVecs>
void tile(const float* const* vals, const uint8_t* const* meta, int64_t g0, int64_t ng, const float* xp,
          float* acc, bool first) {
  constexpr int64_t kWidth = 16 * kVecs;
  __m512 a[R][kVecs];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVecs; ++v) a[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + r * kWidth + 16 * v);
  const float* xg = xp + g0 * 4 * kWidth;
  for (int64_t g = g0; g < g0 + ng; ++g, xg += 4 * kWidth) {
#pragma GCC unroll 16  // the accumulators must stay in registers
    for (int r = 0; r < R; ++r) {
      const unsigned code = code_of(meta[r], g);
      const float* p0 = xg + (code & 3u) * kWidth;
      const float* p1 = xg + (code >> 2) * kWidth;
      const __m512 b0 = _mm512_set1_ps(vals[r][2 * g]), b1 = _mm512_set1_ps(vals[r][2 * g + 1]);
      for (int v = 0; v < kVecs; ++v) {
        a[r][v] = _mm512_fmadd_ps(b0, _mm512_loadu_ps(p0 + 16 * v), a[r][v]);
        a[r][v] = _mm512_fmadd_ps(b1, _mm512_loadu_ps(p1 + 16 * v), a[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVecs; ++v) _mm512_storeu_ps(acc + r * kWidth + 16 * v, a[r][v]);
}

template <int R, int kVecs>
void tile_rows(const Sparse24& w, int64_t j, int64_t g0, int64_t ng, const float* xp, float* acc, bool first) {
  const float* vals[R];
  const uint8_t* meta[R];
  for (int r = 0; r < R; ++r) {
    vals[r] = static_cast<const float*>(w.values) + (j + r) * w.values_rs;
    meta[r] = w.meta + (j + r) * w.meta_rs;
  }
  tile<R, kVecs>(vals, meta, g0, ng, xp, acc, first);
}

template <class T>
void run(const Sparse24& w, const Sparse24Input& x, float* c, int64_t crs, int64_t ccs) {
  constexpr int kVecs = T::kVecs, kRows = T::kRows;
  constexpr int64_t kWidth = T::kWidth, kGroups = T::kGroups;
  const int64_t g = groups_of(w.k), kp = 4 * g;
  const int64_t panels = (x.m + kWidth - 1) / kWidth;
  StoragePtr packed = allocate_storage(Device::cpu(), static_cast<std::size_t>(panels * kp * kWidth) * sizeof(float));
  float* xp = static_cast<float*>(packed->data());
  pack_x(x, w.k, kp, kWidth, xp);
  for_each_task(w.n, x.m, kWidth, static_cast<int64_t>(panels * kp * kWidth * sizeof(float)), [&](int64_t block, int64_t panel) {
    alignas(64) float acc[kBlockRows * kWidth];
    const int64_t j0 = block * kBlockRows, rows = std::min(kBlockRows, w.n - j0);
    const float* panel_x = xp + panel * kp * kWidth;
    for (int64_t g0 = 0; g0 < g; g0 += kGroups) {
      const int64_t ng = std::min(kGroups, g - g0);
      int64_t jj = 0;
      for (; jj + kRows <= rows; jj += kRows) tile_rows<kRows, kVecs>(w, j0 + jj, g0, ng, panel_x, acc + jj * kWidth, g0 == 0);
      for (; jj < rows; ++jj) tile_rows<1, kVecs>(w, j0 + jj, g0, ng, panel_x, acc + jj * kWidth, g0 == 0);
    }
    store_block(acc, rows, kWidth, j0, panel * kWidth, x.m, c, crs, ccs);
  });
}

}  // namespace

// 4 vectors x 4 rows (16 accumulators) over k-blocks of 64 groups: the
// fastest of the shapes tried at 4096 x 4096 x 256 (V = 1..8, R = 2..16,
// G = 8..1024); fewer vectors per row pay the metadata and broadcasts of a
// group over too few FMAs, more rows or vectors spill registers. Few rows of
// X (a decode step: m = 1 .. 32) take narrower panels, which waste fewer lanes.
void sparse24_f32_avx512(const Sparse24& w, const Sparse24Input& x, float* c, int64_t crs, int64_t ccs) {
  if (x.m <= 16) return run<Tile<1, 8, 256>>(w, x, c, crs, ccs);
  if (x.m <= 32) return run<Tile<2, 8, 128>>(w, x, c, crs, ccs);
  run<Tile<4, 4, 64>>(w, x, c, crs, ccs);
}

}  // namespace bp::kernels::cpu
