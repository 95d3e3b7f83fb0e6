#pragma once
// The contract between the GEMM driver (gemm.cpp) and the per-ISA files
// (gemm_generic.cpp, gemm_avx2.cpp, gemm_avx512.cpp, gemm_avx512_bf16.cpp).
//
// Note [GEMM packed panels]
// The driver cuts C = A·B into GotoBLAS/BLIS-style blocks: B into kc x nc
// blocks, A into mc x kc blocks, and copies ("packs") each block into a
// buffer the micro-kernel reads strictly sequentially:
//   a packed A block is ceil(mc/MR) strips; a strip holds MR rows of A,
//   stored k-major: for each k, the MR values of that column (MR x kpad);
//   a packed B block is ceil(nc/NR) strips of NR columns, for each k the NR
//   values of that row (NR x kpad).
// Rows and columns past the edge are zero, and k is padded with zeros to a
// multiple of `k_unit` (2 for the bf16 dot-product kernels, which consume k
// in pairs: a strip then stores, per k pair, the two values of each line next
// to each other). Packing converts the source dtype to the kernel's operand
// type (fp32 -> bf16 for the "medium" path, bf16/f16 -> fp32 elsewhere), so
// the micro-kernel only ever sees one operand type.
//
// Only the ISA files contain code compiled with ISA flags; the driver calls
// them through the function pointers below, after gemm_isa_supported().

#include <cstdint>

#include "backplane/dtype.h"

namespace bp::kernels::cpu::detail {

// The element type of the caller's A and B is a bp::DType (f32, f64, bf16, f16).
using bp::DType;

// Packs `lines` lines of a strided source (element p of line l at
// src[l * ls + p * ks], elements of the source dtype) with `k` elements each
// into ceil(lines / W) strips of W lines (W = MR for A, NR for B) at dst, in
// the layout of Note [GEMM packed panels].
using PackFn = void (*)(const void* src, int64_t ls, int64_t ks, int64_t lines, int64_t k, void* dst);

// C[0:m, 0:n] = alpha * (packed A strip)·(packed B strip) + beta * C, where
// the strips hold `k` (unpadded) steps; m <= MR, n <= NR. beta == 0 never
// reads C.
template <class Acc>
using MicroKernelFn = void (*)(int64_t k, const void* a, const void* b, Acc* c, int64_t rs_c, int64_t cs_c, int m,
                               int n, Acc alpha, Acc beta);

// y[0:n] = alpha * x·B + beta * y for one row x (the m == 1 case; n == 1 is
// the same problem transposed): x has k elements at stride xs, B is k x n
// with strides (rs, cs), y has stride ys. No packing; optional (nullptr).
template <class Acc>
using GemvFn = void (*)(int64_t k, int64_t n, const void* x, int64_t xs, const void* b, int64_t rs, int64_t cs,
                        Acc* y, int64_t ys, Acc alpha, Acc beta);

// C (m x n) = alpha * A·B + beta * C for a few rows (2 <= m <= kGemmFewRowsMax)
// of a row-contiguous A (row stride a_rs) and a B whose columns are
// contiguous along k (column j at b + j * b_cs): x·Wᵀ for a small batch of
// tokens. B streams in once for all m rows and nothing is packed (Note
// [Few-row products] in gemm.cpp). Optional (nullptr).
template <class Acc>
using FewRowsFn = void (*)(int m, int64_t k, int64_t n, const void* a, int64_t a_rs, const void* b, int64_t b_cs,
                           Acc* c, int64_t c_rs, int64_t c_cs, Acc alpha, Acc beta);

// Like MicroKernelFn, but B is not packed: it is read in place from a source
// with contiguous rows (k rows at stride rs_b elements, n <= NR columns of
// the source dtype). For small m, where packing B would cost as much as the
// multiply (see gemm_avx512_direct.h). Optional (nullptr).
template <class Acc>
using DirectKernelFn = void (*)(int64_t k, const void* a, const void* b, int64_t rs_b, Acc* c, int64_t rs_c,
                                int64_t cs_c, int m, int n, Acc alpha, Acc beta);

// The micro-kernel of the last k block of a 16-bit product (Note [GEMM
// rounding epilogue] in gemm.cpp): alpha * (A strip)·(B strip) + beta * C,
// rounded to the kernel's source type (bf16 or f16 bits) and written to out
// (row stride rs_out) instead of C; C (row-major, fp32) is only read, and
// only when beta != 0. Optional (nullptr).
using MicroOut16Fn = void (*)(int64_t k, const void* a, const void* b, const float* c, int64_t rs_c, uint16_t* out,
                              int64_t rs_out, int m, int n, float alpha, float beta);

// DirectKernelFn's counterpart of MicroOut16Fn (B read in place). Optional.
using DirectOut16Fn = void (*)(int64_t k, const void* a, const void* b, int64_t rs_b, const float* c, int64_t rs_c,
                               uint16_t* out, int64_t rs_out, int m, int n, float alpha, float beta);

// A tile with A read in place (Note [GEMM direct A] in gemm.cpp): m <= MR
// rows of a row-major source (k contiguous elements per row, rows rs_a
// BYTES apart) times a packed B strip (rs_b == 0) or, when rs_b > 0, B read
// in place as DirectKernelFn reads it (rs_b elements between rows). With
// out set (16-bit products' last k block), the tile is rounded into out as
// MicroOut16Fn does (C row-major, read only when beta != 0); else C gets
// alpha * A·B + beta * C as MicroKernelFn. Optional (nullptr).
template <class Acc>
using RowsAKernelFn = void (*)(int64_t k, const void* a, int64_t rs_a, const void* b, int64_t rs_b, Acc* c,
                               int64_t rs_c, int64_t cs_c, int m, int n, Acc alpha, Acc beta, uint16_t* out,
                               int64_t rs_out);

template <class Acc>
struct GemmKernel {
  int mr, nr;      // micro-tile
  int k_unit;      // packed panels pad k to a multiple of this
  int elem_bytes;  // size of one packed element
  int mc, kc, nc;  // blocking (the ISA file says how it chose them)
  PackFn pack_a, pack_b;
  MicroKernelFn<Acc> micro;
  GemvFn<Acc> gemv;
  DirectKernelFn<Acc> direct = nullptr;
  MicroOut16Fn micro_out16 = nullptr;
  DirectOut16Fn direct_out16 = nullptr;
  RowsAKernelFn<Acc> rows_a = nullptr;
  FewRowsFn<Acc> few_rows = nullptr;
};

// Each ISA file's table: nullptr when it has no kernel for that source type.
const GemmKernel<float>* gemm_kernel_f32_generic(DType src);
const GemmKernel<double>* gemm_kernel_f64_generic();
const GemmKernel<float>* gemm_kernel_f32_avx2(DType src);
const GemmKernel<double>* gemm_kernel_f64_avx2();
const GemmKernel<float>* gemm_kernel_f32_avx512(DType src);
const GemmKernel<double>* gemm_kernel_f64_avx512();
const GemmKernel<float>* gemm_kernel_f32_avx512_bf16(DType src);

}  // namespace bp::kernels::cpu::detail
