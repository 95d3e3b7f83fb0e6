#pragma once
// builtin:blocked's path for batches of tiny matrices (n <= kSmallN): the
// loops of the recursive kernels' leaves with the size a compile-time
// constant, so each matrix's factorization is fully unrolled straight-line
// code, and the batch loop calls them directly (no per-matrix indirection).
// Same arithmetic and conventions as the leaves (LAPACK's pivots and infos).
// Up to kernels::cpu::kLanesMaxN (8) the batch runs a group of matrices at
// a time across the vector lanes (src/kernels/cpu/linalg_lanes.h), on the
// widest variant the CPU capability cap allows.

#include "ops/linalg/params.h"

namespace bp::ops::linalg {

inline constexpr int64_t kSmallN = 16;

// Runs p on the small path when it applies (square, n <= kSmallN, a lower
// Cholesky or an LU-based routine, float32 / float64), inputs loaded
// included (a dense A is read in place by the lanes); false when it does
// not apply (nothing was done).
bool run_small(const Params& p);

}  // namespace bp::ops::linalg
