#pragma once
// Backplane's own 2:4 sparse GEMM on the CPU layout of Note [2:4 CPU
// layout]: C = X · Wᵀ where W [n, k] keeps 2 of every 4 consecutive entries
// of a row. Half the multiplies of the dense product: each group of 4
// columns costs two broadcast-FMAs (f32; the group's 4-bit code chooses
// which packed rows of X they read) or one bf16 pair dot product
// (AVX512_BF16; the code chooses, through a vpermw, which two columns of X
// each of 16 rows of W pairs with).
//
// Note [2:4 CPU layout]
// A weight W [n, k] in 2:4 form. Its columns are cut into groups of 4; k is
// padded with zero columns to kp = 8 * ceil(k / 8), so every row has an even
// number of groups, g = kp / 4.
//   values [n, g * 2] (the weight's dtype): the two stored entries of each
//     group, in column order. A group with fewer than two nonzeros stores
//     zeros too (its nonzeros first, then the lowest free columns).
//   meta [n, g / 2] (int8, read as unsigned bytes): group j's 4-bit code in
//     byte j / 2, the low nibble for even j; bits 0-1 give the column
//     (0..3, within the group) of the first stored entry, bits 2-3 that of
//     the second, first < second. Padding groups store zeros at columns 0, 1.
//     A code with first >= second (which compression never writes) gives an
//     unspecified product, but never a read outside the group.
// The product takes exactly the stored entries: a pruned (absent) entry
// multiplies nothing, so an Inf or NaN in X under a pruned entry does not
// reach the output (docs/differences.md), as with cuSPARSELt.

#include <cstdint>

namespace bp::kernels::cpu {

struct Sparse24 {
  const void* values;  // f32, or bf16 bits (uint16)
  int64_t values_rs;   // elements between rows
  const uint8_t* meta;
  int64_t meta_rs;     // bytes between rows
  int64_t n, k;        // W's logical shape (k before padding)
};

// The activations X [m, k]: element (r, c) at data[r * rs + c * cs].
struct Sparse24Input {
  const void* data;  // f32, or bf16 bits (uint16)
  int64_t m, rs, cs;
};

// C(r, j) = sum over the stored entries of W's row j of W(j, c) * X(r, c),
// r < m, j < n, accumulated in fp32 and written (not added) to
// c[r * crs + j * ccs]. Parallel with OpenMP over the caller's thread count.
// Needs AVX-512 (F, BW, DQ, VL); the caller checks (sparse24_supported).
void sparse24_f32_avx512(const Sparse24& w, const Sparse24Input& x, float* c, int64_t crs, int64_t ccs);

// The same with bf16 products and fp32 accumulation (vdpbf16ps: each stored
// pair of a group is one 32-bit lane's dot product; sparse24_avx512_bf16.cpp). values_f32 / x_f32:
// the operand is f32 and is rounded to bf16 on the way (the "medium"
// precision path); otherwise it holds bf16 bits. Needs AVX512_BF16.
void sparse24_bf16_avx512(const Sparse24& w, bool values_f32, const Sparse24Input& x, bool x_f32, float* c,
                          int64_t crs, int64_t ccs);

bool sparse24_supported(bool bf16);

// The element type of an AVX2 product's values and X (one type for both).
enum class Sparse24Type { f32, bf16, f16 };

// C as sparse24_f32_avx512, for AVX2 + FMA + F16C CPUs (sparse24_avx2.cpp):
// f32 FMAs, bf16 / f16 operands widened to f32 as they are loaded (exact:
// every 16-bit value is an f32). The caller checks sparse24_avx2_supported.
void sparse24_avx2(const Sparse24& w, const Sparse24Input& x, Sparse24Type type, float* c, int64_t crs, int64_t ccs);

bool sparse24_avx2_supported();  // this build has the variant and this CPU runs it

}  // namespace bp::kernels::cpu
