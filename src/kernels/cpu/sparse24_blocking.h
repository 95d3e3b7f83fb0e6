#pragma once
// The blocking the 2:4 kernels share (sparse24_avx512.cpp,
// sparse24_avx512_bf16.cpp, sparse24_avx2.cpp; Note [2:4 CPU layout]). Internal linkage: each
// ISA file compiles its own copy with its own flags.
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

// Runs body(block, panel) for every task, in parallel. Block-major order
// (a thread's consecutive tasks share a block of W, kept in L2) re-reads the
// whole packed X once per block of W; once X outgrows its share of L3
// (x_bytes > kPackedXInL3) those re-reads come from memory, and panel-major
// order (consecutive tasks share a panel of X; W streams once per panel)
// moves less: at 4096 x 4096 x 1024 in bf16 (25 MiB of packed X) it took
// the kernel from 0.97x to 1.14x the dense bf16 GEMM's speed.
constexpr int64_t kPackedXInL3 = int64_t{8} << 20;

template <class Body>
void for_each_task(int64_t n, int64_t m, int64_t width, int64_t x_bytes, Body&& body) {
  const int64_t blocks = (n + kBlockRows - 1) / kBlockRows, panels = (m + width - 1) / width;
  const int64_t tasks = blocks * panels;
  const bool panel_major = x_bytes > kPackedXInL3;
  const int team = threads::team_size(tasks);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    if (panel_major)
      body(t % blocks, t / blocks);
    else
      body(t / panels, t % panels);
  }
}

// Runs body(block, panel) for every task as for_each_task, in a third
// order: panels in bands whose packed X fits kPackedXInL3 (at least one
// panel), bands one after another, block-major within a band (in parallel).
// A band's X stays in L3 while every block of W passes over it, so W streams
// once per band instead of once per panel (panel-major), and X once in all
// instead of once per block (block-major). The AVX2 kernel's order: at
// 4096 x 4096 x 1024 in f32 (64 MiB of packed X) it took that kernel from
// about 1.38x to 1.5x the dense builtin:avx2 GEMM's speed (on Zen 3; the
// AVX-512 kernels were not re-measured, so they keep for_each_task).
template <class Body>
void for_each_task_banded(int64_t n, int64_t m, int64_t width, int64_t panel_bytes, Body&& body) {
  const int64_t blocks = (n + kBlockRows - 1) / kBlockRows, panels = (m + width - 1) / width;
  const int64_t band = std::max<int64_t>(1, kPackedXInL3 / std::max<int64_t>(panel_bytes, 1));
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
