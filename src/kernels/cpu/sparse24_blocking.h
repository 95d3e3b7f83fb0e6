#pragma once
// The blocking the 2:4 panel kernels share (sparse24_avx512.cpp,
// sparse24_avx2.cpp; Note [2:4 CPU layout]; sparse24_avx512_bf16.cpp uses
// only groups_of). Internal linkage: each ISA file compiles its own copy
// with its own flags.
//
// The product is computed transposed, Cᵀ = W · Xᵀ: a register tile is a
// few rows of W (each stored entry broadcast) times a panel of rows of X
// (16-lane vectors), so the metadata only chooses which packed row of X an
// FMA reads, never a lane shuffle. X is packed once per call, k-major per
// panel; tasks are (block of kBlockRows rows of W, panel), ordered so that
// consecutive tasks of a thread share a block of W (kept in L2), and within
// a task the packed X of one k-block stays in cache (L2) across the block's
// tiles. Each kernel file chooses its tile (vectors, rows) and k-block.

#include <algorithm>
#include <cstdint>

#include "core/threads.h"

namespace bp::kernels::cpu {
namespace {

constexpr int64_t kBlockRows = 256;  // rows of W per task (64 re-read X 4x as often: measurably slower)

inline int64_t groups_of(int64_t k) { return (k + 7) / 8 * 2; }  // g of Note [2:4 CPU layout]

inline unsigned code_of(const uint8_t* meta_row, int64_t group) {
  return (meta_row[group >> 1] >> ((group & 1) * 4)) & 15u;
}

// X's packed panels are walked in bands of at most this many bytes (see
// for_each_task_banded). The 8 MiB of the AVX2 kernel's measurements; the
// AVX-512 f32 kernel passes 2 MiB (measured below).
constexpr int64_t kPackedXInL3 = int64_t{8} << 20;

// Runs body(block, panel) for every task (block: kBlockRows rows of W;
// panel: `width` rows of X), in parallel: panels in bands whose packed X
// fits band_bytes (at least one panel), bands one after another,
// block-major within a band. A band's X stays in L3 while every block of W passes over it, so W streams
// once per band instead of once per panel (panel-major), and X once in all
// instead of once per block (block-major). The AVX2 kernel's order: at
// 4096 x 4096 x 1024 in f32 (64 MiB of packed X) it took that kernel from
// about 1.38x to 1.5x the dense builtin:avx2 GEMM's speed (on Zen 3). The
// AVX-512 f32 kernel (Zen 5, with its prefetch of W) measured 1.27x at 8 MiB
// bands, 1.34x at 1-2 MiB, against panel-major's 1.19x.
template <class Body>
void for_each_task_banded(int64_t n, int64_t m, int64_t width, int64_t panel_bytes, Body&& body,
                          int64_t band_bytes = kPackedXInL3) {
  const int64_t blocks = (n + kBlockRows - 1) / kBlockRows, panels = (m + width - 1) / width;
  const int64_t band = std::max<int64_t>(1, band_bytes / std::max<int64_t>(panel_bytes, 1));
  for (int64_t p0 = 0; p0 < panels; p0 += band) {
    const int64_t in_band = std::min(band, panels - p0), tasks = blocks * in_band;
    const int team = threads::team_size(tasks);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
    for (int64_t t = 0; t < tasks; ++t) body(t / in_band, p0 + t % in_band);
  }
}

// Writes a finished block (rows j0.. of W, panel columns r0..; acc is
// [rows][width]) to C(r, j) = c[r * crs + j * ccs].
inline void store_block(const float* acc, int64_t rows, int64_t width, int64_t j0, int64_t r0, int64_t m, float* c,
                        int64_t crs, int64_t ccs) {
  const int64_t cols = std::min(width, m - r0);
  if (ccs <= crs) {  // C's rows are W's rows: write along them
    for (int64_t rr = 0; rr < cols; ++rr)
      for (int64_t jj = 0; jj < rows; ++jj) c[(r0 + rr) * crs + (j0 + jj) * ccs] = acc[jj * width + rr];
  } else {
    for (int64_t jj = 0; jj < rows; ++jj)
      for (int64_t rr = 0; rr < cols; ++rr) c[(r0 + rr) * crs + (j0 + jj) * ccs] = acc[jj * width + rr];
  }
}

}  // namespace
}  // namespace bp::kernels::cpu
