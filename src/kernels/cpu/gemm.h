#pragma once
// Backplane's own GEMM: packed, cache-blocked, with one micro-kernel per ISA
// (src/kernels/cpu/gemm_<isa>.cpp, each compiled with its ISA's flags and
// picked at run time), parallel with OpenMP over the caller's thread count.
//
// C = alpha * A·B + beta * C for strided views: element (i, j) of a view is
// data[i * rs + j * cs], so transposed inputs are just swapped strides and
// are never copied (packing reads them in place). With beta == 0, C is not
// read (it may hold NaN or garbage).
//
// Precision: every variant accumulates in fp32 (f64: in f64).
// GemmIsa::avx512_bf16 on fp32 inputs rounds A and B to bf16 while packing
// and multiplies them with the AVX512_BF16 dot-product instructions: the
// "medium" fp32 precision path, about 2x the fp32 speed. On bf16 inputs it
// is the native path. fp16 inputs are widened to fp32 while packing.

#include <cstddef>
#include <cstdint>

#include "backplane/dtype.h"

namespace bp::kernels::cpu {

enum class GemmIsa { generic, avx2, avx512, avx512_bf16 };

const char* gemm_isa_name(GemmIsa isa);  // "generic", "avx2", "avx512", "avx512_bf16"
// Whether this build has the variant and this CPU can run it (hardware
// only: the CPU-capability cap is applied by the caller's checks).
bool gemm_isa_supported(GemmIsa isa);

// The most rows of A the few-row products take, and the least k (Note
// [Few-row products] in gemm.cpp): x·Wᵀ with a B whose columns are
// contiguous, no packing, where the variant has them (gemm_has_few_rows).
inline constexpr int kGemmFewRowsMax = 4;
inline constexpr int64_t kGemmFewRowsMinK = 256;
bool gemm_has_few_rows(GemmIsa isa, DType src);
// Whether the variant computes the last strip of n columns (what a row-major
// A times n columns leaves past whole register-tile strips) as dot products
// (Note [GEMM narrow last strip] in gemm.cpp): that strip is no wider than
// a few columns and the variant has the tile for it.
bool gemm_narrow_last_strip(GemmIsa isa, DType src, int64_t n);

template <class T>
struct MatView {
  T* data;
  int64_t rows, cols;
  int64_t rs, cs;  // element strides between rows and between columns
};

// fp32 in, fp32 out. isa avx512_bf16 = bf16 arithmetic, fp32 accumulation.
// `shared_a`: A packed by gemm_pack_shared_a (Note [GEMM shared A]), or nullptr.
void gemm_f32(GemmIsa isa, MatView<const float> a, MatView<const float> b, MatView<float> c, float alpha,
              float beta, const void* shared_a = nullptr);
// f64 in and out (generic, avx2, avx512).
void gemm_f64(GemmIsa isa, MatView<const double> a, MatView<const double> b, MatView<double> c, double alpha,
              double beta, const void* shared_a = nullptr);
// Where a 16-bit product goes (Note [GEMM rounding epilogue]): `data` (raw
// bf16 or f16 bits, the type of the inputs) with row stride `rs`, or nowhere.
struct Out16 {
  uint16_t* data = nullptr;
  int64_t rs = 0;
};

// bf16 (raw uint16 bits) in; C in fp32. With `out`, the GEMM rounds each
// finished tile into out (bf16) while it is in cache and returns true; C then
// holds scratch (partial sums), not the product. False means it did not (a
// shape it does not fuse: one row or column, a column-major C): C holds the
// product and the caller rounds it.
bool gemm_bf16(GemmIsa isa, MatView<const uint16_t> a, MatView<const uint16_t> b, MatView<float> c, float alpha,
               float beta, Out16 out = {}, const void* shared_a = nullptr);
// fp16 (raw uint16 bits) in; C in fp32; `out` as gemm_bf16's, in f16.
bool gemm_f16(GemmIsa isa, MatView<const uint16_t> a, MatView<const uint16_t> b, MatView<float> c, float alpha,
              float beta, Out16 out = {}, const void* shared_a = nullptr);

// One A for several products (Note [GEMM shared A] in gemm.cpp): products
// C_i = alpha A B_i + beta C_i of one shape whose A (m x k, strides a_rs,
// a_cs, elements of dtype `src`) is the same, whose B_i have the same
// strides (b_rs, b_cs) and whose C_i are row-major: a batch with a
// broadcast A. gemm_shared_a_bytes is the size of A packed for them, or 0
// where such a product would not pack A (it reads A in place, or takes the
// GEMV or transposed path): then there is nothing to share. Otherwise
// gemm_pack_shared_a packs A into `dst` (that many bytes, 64-byte aligned),
// and each product passes dst as `shared_a` to the gemm_* entry of `src`
// with the same isa, on the same thread count.
std::size_t gemm_shared_a_bytes(GemmIsa isa, DType src, int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs,
                                int64_t b_rs, int64_t b_cs);
void gemm_pack_shared_a(GemmIsa isa, DType src, const void* a, int64_t a_rs, int64_t a_cs, int64_t m, int64_t k,
                        void* dst);

// A packed once, multiplied many times (Note [GEMM pre-packed A] in
// gemm.cpp), bf16 and fp32: gemm_bf16_pack_a writes A (m x k, k at most the
// kernel's KC: 0 bytes from gemm_bf16_packed_a_bytes means not packable) in
// the kernel's layout into dst (gemm_bf16_packed_a_bytes(isa, m, k) bytes);
// gemm_bf16_packed then computes as gemm_bf16 with that A (same isa, m and
// k); C must be row-major.
std::size_t gemm_bf16_packed_a_bytes(GemmIsa isa, int64_t m, int64_t k);
void gemm_bf16_pack_a(GemmIsa isa, MatView<const uint16_t> a, void* dst);
bool gemm_bf16_packed(GemmIsa isa, const void* packed_a, int64_t m, int64_t k, MatView<const uint16_t> b,
                      MatView<float> c, float alpha, float beta, Out16 out = {});
// The same with the first k of the packed_k columns A was packed with (k
// even where below packed_k; Note [GEMM packed A prefix] in gemm.cpp).
bool gemm_bf16_packed_prefix(GemmIsa isa, const void* packed_a, int64_t m, int64_t packed_k, int64_t k,
                             MatView<const uint16_t> b, MatView<float> c, float alpha, float beta, Out16 out = {});
// fp32's twins (any k prefix: the fp32 kernels' k unit is 1).
std::size_t gemm_f32_packed_a_bytes(GemmIsa isa, int64_t m, int64_t k);
void gemm_f32_pack_a(GemmIsa isa, MatView<const float> a, void* dst);
void gemm_f32_packed_prefix(GemmIsa isa, const void* packed_a, int64_t m, int64_t packed_k, int64_t k,
                            MatView<const float> b, MatView<float> c, float alpha, float beta);

}  // namespace bp::kernels::cpu
