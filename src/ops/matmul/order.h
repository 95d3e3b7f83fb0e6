#pragma once
// Matmul's per-problem default order.
//
// Note [Matmul default order]
// The list in op.cpp is the fallback order: Backplane's own kernels first,
// widest ISA first. One rule moves openblas:gemm first, for f32 CPU
// problems on hardware without the AVX-512 GEMM (its widest builtin kernel
// is AVX2) whose B operand is large (n x k >= kOpenblasLeadMinNK elements,
// 4 MiB of fp32) and that are not a matrix-vector product (m, n >= 2).
// Measured on a Zen 3 core (1 thread, thread CPU time, interleaved), GFLOP/s
// builtin:avx2 / openblas:gemm: 1024^3 61-77 / 70-86, 2048^3 63-74 / 76-88,
// 16x4096x4096 20-25 / 40-43 (packing a 64 MiB B for 16 rows), 128x4096x4096
// 56 / 77, 512x512x4096 70 / 80, 512x4096x11008 66 / 77; below the bound the
// builtin kernel is level or ahead (256^3 59-70 / 52-65, 512^3 62-76 /
// 64-76, 2048x256x256 73 / 67), and for m = 1 its GEMV is 2.5x OpenBLAS's.
// On AVX-512 hardware builtin:avx512 leads everywhere (measured ahead of
// OpenBLAS there), so the rule does not apply. It only reorders: knobs that
// reject openblas:gemm (implementations(...), preferred_blas_library) leave
// the list's order, the rank reads only the problem and the hardware, so
// autotune keys are unchanged, and explain names the rule in a note.

#include <string>

#include "backplane/dispatch.h"

namespace bp::ops::matmul {

inline constexpr int64_t kOpenblasLeadMinNK = int64_t{1} << 20;

bool openblas_leads(const dispatch::Problem& p);
int default_rank(const dispatch::Implementation& impl, const dispatch::Problem& p);
std::string default_order_note(const dispatch::Problem& p);

}  // namespace bp::ops::matmul
