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
//
// A second rule moves onednn:matmul first for linear-shaped CPU problems:
// B a transposed view (`x @ w.T`, w row-major: every linear layer and the
// channels-last 1x1 convolution's GEMM), A row-major, one batch entry (a
// linear's batch is folded into its rows), n x k >= kOnednnLeadLinearMinNK,
// and few rows, but more than the builtin kernels take unpacked (below):
// m <= kOnednnLeadLinearMaxRowsF32 for f32,
// m <= kOnednnLeadLinearMaxRowsBf16 for bf16. Our kernels pack such a B by
// transposes before every call (w is read, written and read again), which
// oneDNN avoids; with few rows the pack is not amortised. Measured on Zen 5
// (thread CPU time, best of 7, both in one process), builtin / oneDNN time:
//   f32, 1 thread: 4x4096x4096 1.56, 16x4096x4096 1.35, 8x1024x1024 1.29,
//     64x256x256 1.30, 49x512x2048 1.14-1.17, 128x256x1024 1.21, 196x1024x256
//     1.07-1.09, 256x1024x1024 1.08, 392x512x2048 1.09, 512x1024x1024 1.02;
//   f32, 2 threads: 1.13-1.32 on the same shapes up to 392 rows;
//   bf16 (after its transposed-B pack was vectorised): 4x4096x4096 2.07,
//     16x4096x4096 1.74, 49x512x2048 1.16 (1.31 on 2 threads), 8x1024x1024
//     1.14; from 128 rows level or ahead (196x1024x256 on 2 threads: 0.75).
// One row (m = 1) is left out: our GEMV packs nothing and reads w's rows
// in place eight at a time (Note [Threaded GEMV] in gemm.cpp); builtin /
// oneDNN time at 1 x 4096 x 4096, 1 x 11008 x 4096 and 1 x 4096 x 11008:
// f32 0.68-0.72 (one thread), 0.72-0.77 (two); bf16 0.41-0.50 and 0.27-0.30.
// Nor are 2-4 rows where the AVX-512 kernels have few-row products and k
// is at least kGemmFewRowsMinK (Note [Few-row products] in gemm.cpp: w
// read once for all rows, unpacked),
// builtin / oneDNN time at 2 and 4 x 4096 x 4096: f32 0.67 and 0.86 (one
// thread), 0.64 and 0.80 (two); bf16 0.57 and 0.81, 0.29 and 0.65.
// A third moves it first for narrow f32 products: A and B row-major (any
// batch: NCHW 1x1 convolutions multiply the weight by each image), n <=
// kOnednnLeadNarrowMaxN columns (two or more) and a large A (m x k >=
// kOnednnLeadNarrowMinMK). Our kernels pack A (the weight) for one or two B
// strips of 48 columns, so the pack is not amortised and a ragged strip
// wastes lanes. Builtin / oneDNN time, f32, 1 thread: 512x16x2048 1.96,
// 512x32x2048 1.44, 512x49x2048 1.31, 512x64x2048 1.42, 1024x49x1024 1.29,
// 2048x49x512 1.14; from 96 columns within 12% (512x96x2048 1.12,
// 1024x196x256 1.11, 128x784x512 1.02). bf16 is level there (0.94-1.13).
// One column (n = 1, W·x) is the GEMV, which packs nothing: builtin /
// oneDNN time at 4096 x 1 x 4096, f32, 0.75 (one thread), 0.85 (two).
// Nor does it cover one product (batch 1) whose last strip the builtin
// kernel computes as dot products, reading A in place (Note [GEMM narrow
// last strip] in gemm.cpp: 2-4 columns, 49-52, ...): builtin / oneDNN time,
// f32, one thread / two: 512x49x2048 0.78 / 0.78, 2048x49x512 0.84-0.86 /
// 0.85-0.91, 4096x49x256 0.81 / 0.81-0.86, 512x52x2048 0.87 / 0.90,
// 512x4x2048 0.51 / 0.76-0.82, 2048x2x1024 0.43 / 0.46-0.55. The other
// widths measured as before where A is packed (4096x16x256 1.47-1.50,
// 1024x64x384 1.24-1.35) and within 0-14% of oneDNN where A's long rows are
// now read in place (Note [GEMM direct A]: 512x16x2048 1.00-1.03, 512x32x2048
// 1.01-1.10, 512x64x2048 1.08-1.14).

#include <string>

#include "backplane/dispatch.h"

namespace bp::ops::matmul {

inline constexpr int64_t kOpenblasLeadMinNK = int64_t{1} << 20;
inline constexpr int64_t kOnednnLeadLinearMinNK = int64_t{1} << 16;
inline constexpr int64_t kOnednnLeadLinearMaxRowsF32 = 512;
inline constexpr int64_t kOnednnLeadLinearMaxRowsBf16 = 64;
inline constexpr int64_t kOnednnLeadNarrowMaxN = 64;
inline constexpr int64_t kOnednnLeadNarrowMinMK = int64_t{1} << 20;

bool openblas_leads(const dispatch::Problem& p);
bool onednn_leads_linear(const dispatch::Problem& p);
bool onednn_leads_narrow(const dispatch::Problem& p);
int default_rank(const dispatch::Implementation& impl, const dispatch::Problem& p);
std::string default_order_note(const dispatch::Problem& p);

}  // namespace bp::ops::matmul
