// sparse24_f32_avx512: the fp32 2:4 kernel (sparse24.h, blocking in
// sparse24_blocking.h). Per group and stored entry: one broadcast and four
// FMAs whose memory operand is the packed X row the metadata names.

#include <immintrin.h>

#include <vector>

#include "backplane/tensor.h"
#include "kernels/cpu/scratch.h"
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

// acc[R rows][kWidth] += the groups [g0, g0 + ng) of R rows of W times the
// packed X (g0 and ng even). Groups in pairs, one meta byte per row and pair:
// each 2-bit column is masked in place and scaled straight to a byte offset
// into the packed X (as sparse24_avx2.cpp; no variable shift per group).
template <int R, int kVecs>
void tile(const float* const* vals, const uint8_t* const* meta, int64_t g0, int64_t ng, const float* xp,
          float* acc, bool first) {
  constexpr int64_t kWidth = 16 * kVecs, kRowBytes = kWidth * sizeof(float);
  static_assert(kRowBytes % 64 == 0);
  __m512 a[R][kVecs];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) a[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc + r * kWidth + 16 * v);
  const char* xg = reinterpret_cast<const char*>(xp + g0 * 4 * kWidth);
  for (int64_t i = 0; i < ng; i += 2, xg += 8 * kRowBytes) {
#pragma GCC unroll 16  // the accumulators must stay in registers
    for (int r = 0; r < R; ++r) {
      const unsigned b = meta[r][(g0 + i) >> 1];
      const int64_t first_at[2] = {(b & 0x03u) * kRowBytes, (b & 0x30u) * (kRowBytes / 16) + 4 * kRowBytes};
      const int64_t second_at[2] = {(b & 0x0Cu) * (kRowBytes / 4), (b & 0xC0u) * (kRowBytes / 64) + 4 * kRowBytes};
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const float* p0 = reinterpret_cast<const float*>(xg + first_at[h]);
        const float* p1 = reinterpret_cast<const float*>(xg + second_at[h]);
        const __m512 b0 = _mm512_set1_ps(vals[r][2 * (g0 + i + h)]), b1 = _mm512_set1_ps(vals[r][2 * (g0 + i + h) + 1]);
#pragma GCC unroll 8
        for (int v = 0; v < kVecs; ++v) {
          a[r][v] = _mm512_fmadd_ps(b0, _mm512_loadu_ps(p0 + 16 * v), a[r][v]);
          a[r][v] = _mm512_fmadd_ps(b1, _mm512_loadu_ps(p1 + 16 * v), a[r][v]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
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
  // The next tile's slice of W (R rows of 2 ng values, ng / 2 bytes of
  // meta) into L1 while this tile computes: W's rows are R short strided
  // runs per tile that the hardware prefetcher does not follow (6-10% at
  // 4096 x 4096 x 256 .. 1024). Past the last row the addresses are never
  // read (a prefetch does not fault).
  for (int r = 0; r < R; ++r) {
    const char* v = reinterpret_cast<const char*>(vals[r] + R * w.values_rs + 2 * g0);
    for (int64_t b = 0; b < 8 * ng; b += 64) _mm_prefetch(v + b, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(meta[r] + R * w.meta_rs + g0 / 2), _MM_HINT_T0);
  }
  tile<R, kVecs>(vals, meta, g0, ng, xp, acc, first);
}

// Bands of 2 MiB of packed X (sparse24_blocking.h): at 4096 x 4096 x 1024,
// 1.34x the dense GEMM against 1.27x at the AVX2 kernel's 8 MiB.
constexpr int64_t kBandBytes = int64_t{2} << 20;

template <class T>
void run(const Sparse24& w, const Sparse24Input& x, float* c, int64_t crs, int64_t ccs) {
  constexpr int kVecs = T::kVecs, kRows = T::kRows;
  constexpr int64_t kWidth = T::kWidth, kGroups = T::kGroups;
  const int64_t g = groups_of(w.k), kp = 4 * g;
  const int64_t panels = (x.m + kWidth - 1) / kWidth;
  // Packed X in kept scratch (Note [Kernel scratch]): a fresh block per call
  // (16 MiB at m = 1024) was faulted in page by page on every call.
  float* xp = scratch(ScratchSlot::sparse24_x, static_cast<std::size_t>(panels * kp * kWidth));
  pack_x(x, w.k, kp, kWidth, xp);
  for_each_task_banded(w.n, x.m, kWidth, static_cast<int64_t>(kp * kWidth * sizeof(float)), [&](int64_t block, int64_t panel) {
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
  }, kBandBytes);
}

}  // namespace

// 4 vectors x 4 rows (16 accumulators) over k-blocks of 32 groups (a 32 KiB
// slice of packed X): the fastest of the shapes tried at 4096 x 4096 x 256
// and 1024 on Zen 5 (V x R = 4x4, 2x8, 3x6, 4x6, 6x4, 8x3; G = 8..64: 64
// groups, the earlier choice, measured 1.2x the dense GEMM against 32's
// 1.5x); fewer vectors per row pay the metadata and broadcasts of a group
// over too few FMAs, more rows or vectors spill registers. Few rows of X (a
// decode step: m = 1 .. 32) take narrower panels, which waste fewer lanes.
void sparse24_f32_avx512(const Sparse24& w, const Sparse24Input& x, float* c, int64_t crs, int64_t ccs) {
  if (x.m <= 16) return run<Tile<1, 8, 256>>(w, x, c, crs, ccs);
  if (x.m <= 32) return run<Tile<2, 8, 128>>(w, x, c, crs, ccs);
  run<Tile<4, 4, 32>>(w, x, c, crs, ccs);
}

}  // namespace bp::kernels::cpu
