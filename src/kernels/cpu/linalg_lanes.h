#pragma once
// Batches of tiny matrices factored "across the batch": a group of W
// matrices (W = the vector width in elements: 8 float / 4 double on AVX2,
// 4 / 2 on the baseline's 16-byte vectors) is transposed so that element
// (i, j) of every matrix of the group shares one vector register, lane l
// holding matrix l's; the small-n algorithm then runs once per group,
// lane-wise, with partial pivoting done by compares and blends instead of
// branches (Note [Pivoting across lanes]). One variant per ISA
// (linalg_lanes_<isa>.cpp over linalg_lanes_impl.h).
//
// Matrices are column-major N x N, one after another (Note [Linalg
// routines] in src/ops/linalg/params.h); B is N x k per matrix. Pivots are
// LAPACK's (1-based row swaps), infos LAPACK's (potrf: the order of the
// first leading minor that is not positive-definite; getrf: the first zero
// U(i, i)), each matrix's exactly as the per-matrix path computes them.

#include <cstdint>

#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {

enum class LanesOp : uint8_t {
  potrf,  // lower Cholesky factor in a (the upper triangle left as it was); info
  getrf,  // L\U in a, piv; info
  getrs,  // B = A^-1 B from getrf's a and piv
  gesv,   // getrf, then getrs (info when info != nullptr)
  inv,    // getrf, then b (N x N) = A^-1; info
};

inline constexpr int kLanesMaxN = 8;

struct LanesBatch {
  LanesOp op = LanesOp::getrf;
  int n = 0;          // 1..kLanesMaxN
  int64_t k = 0;      // B's columns (getrs, gesv; inv: n)
  int64_t count = 0;  // matrices
  void* a = nullptr;  // count x N x N
  // When set: A is read from here, count dense row-major N x N matrices
  // (the caller's input as it lies), instead of from a; a gets the result.
  const void* a_rows = nullptr;
  void* b = nullptr;  // count x N x k (getrs, gesv, inv)
  int32_t* piv = nullptr;   // count x N (getrf, getrs, gesv, inv)
  int32_t* info = nullptr;  // count (may be null for getrs, gesv)
  void* det = nullptr;      // getrf: when set, count determinants too (prod U(j, j), negated per row swap)
};

// Matrices per group for this variant and element size (4 or 8 bytes).
int lanes_width(GemmIsa isa, int element_bytes);
// Runs the first count - count % lanes_width matrices of the batch and
// returns how many that was (the rest is the caller's). isa: generic, or
// avx2 and up (which use the avx2 variant); the caller applies the CPU
// capability cap and checks gemm_isa_supported.
int64_t lanes_run_f32(GemmIsa isa, const LanesBatch& batch);
int64_t lanes_run_f64(GemmIsa isa, const LanesBatch& batch);

namespace detail {
int64_t lanes_run_f32_generic(const LanesBatch& batch);
int64_t lanes_run_f64_generic(const LanesBatch& batch);
int64_t lanes_run_f32_avx2(const LanesBatch& batch);
int64_t lanes_run_f64_avx2(const LanesBatch& batch);
}  // namespace detail

}  // namespace bp::kernels::cpu
