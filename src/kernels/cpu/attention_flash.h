#pragma once
// Flash attention on the CPU: softmax(q·kᵀ·scale + mask)·v, tiled over query
// and key/value blocks with an online softmax (Dao et al., "FlashAttention",
// 2022; Milakov & Gimelshein, "Online normalizer calculation for softmax",
// 2018), so the L x S score matrix is never materialised. Extra memory is
// per thread: one query block, one score block and the accumulators,
// O(block x (E + Ev + block)), plus converted key/value blocks for
// non-accumulator dtypes, all from bp::allocate_storage (memory_stats()
// counts them). OpenMP shares (batch entry, query block) tasks.
//
// Inputs are strided views addressed per batch entry by element offsets the
// caller computes (so broadcasting and grouped-query layouts are just
// offsets and zero strides). Arithmetic is in Acc (float for f32/f16/bf16,
// double for f64); the inner products run on the GEMM kernels (gemm.h).
// Rows whose every key is masked out produce 0, as the math reference does.

#include <cstdint>
#include <vector>

#include "backplane/dtype.h"
#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {


// One input of an attention kernel (flash and efficient): per batch entry
// n, element (r, c) is at data[off[n] + r * rs + c * cs] (f16/bf16 as raw bits).
struct AttnOperand {
  const void* data = nullptr;
  int64_t rs = 0, cs = 1;
  std::vector<int64_t> off;
};

struct FlashAttention {
  DType elem = DType::f32;  // q, k, v and out element type (f16/bf16 as raw bits)
  int64_t batch = 1, L = 0, S = 0, E = 0, Ev = 0;
  AttnOperand q, k, v;
  AttnOperand mask;  // additive, Acc type (float, or double for f64); data null when none
  void* out = nullptr;  // rows of Ev contiguous elements
  int64_t out_rs = 0;
  std::vector<int64_t> out_off;
  double scale = 1.0;
  bool causal = false;  // top-left aligned: query i sees keys j <= i
  GemmIsa isa = GemmIsa::generic;
  // Tile: query rows per task x keys per step. 192 = 4 x 48 (the AVX-512 GEMM
  // NR) and 24 x 8 (MR); 384 keys amortise the per-GEMM packing and call
  // costs. The score block is q_block x kv_block Acc (288 KiB fp32), per thread.
  int64_t q_block = 192, kv_block = 384;
};

void flash_attention(const FlashAttention& args);

// Whether the AVX-512 softmax helpers below can run here (build and CPU).
bool flash_softmax_avx512_supported();

// Whether the bf16 softmax step (attention_flash_avx512_bf16.cpp) can run here.
bool flash_bf16_step_supported();

// The vector width of the softmax helpers a kernel may use: that of the ISA
// its GEMMs run on (pick_gemm_isa has applied the CPU-capability cap), so
// an "avx2" cap keeps the softmax to AVX2 too. scalar is std::exp.
enum class SoftmaxVec { scalar, avx2, avx512 };
SoftmaxVec softmax_vec_for(GemmIsa isa);

// s[i] = exp(s[i] - shift) for i < n; returns their sum. shift is at least
// every s[i] (a row's maximum): the AVX-512 exp is the softmax's shorter one
// for x <= 0 (exp_poly.h). The vector exp of `vec` for float, std::exp for
// double. The online and plain softmaxes of
// every sdpa CPU path (efficient:cpu's rows, math:any's rows) share it.
float exp_shifted_sum(float* s, int64_t n, float shift, SoftmaxVec vec);
double exp_shifted_sum(double* s, int64_t n, double shift, SoftmaxVec vec);
// nan_max over init and s[0..n) (Note [NaN in attention]), vectorised for
// float at `vec`'s width (AVX-512, AVX2).
float row_max(const float* s, int64_t n, float init, SoftmaxVec vec);
double row_max(const double* s, int64_t n, double init, SoftmaxVec vec);

// Note [NaN in attention]
// A score row holding NaN (a NaN in q, k or the mask, or 0·inf from E = 0
// with the default scale) gives a NaN output row, as PyTorch's softmax does,
// in every implementation. The row maximum must keep the NaN: std::max(-inf,
// NaN) returns -inf, which made math:any and efficient:cpu take the row for
// fully masked and write zeros. nan_max is the maximum every softmax here
// takes; a NaN normaliser l then makes the output NaN (never 0 · NaN).
template <class T>
inline T nan_max(T a, T b) {
  return (b > a || b != b) ? b : a;  // a NaN in `a` stays, one in `b` is taken
}
// 1 / l, with l = 0 (no key seen) giving 0 and a NaN l giving NaN.
template <class T>
inline T inverse_normaliser(T l) {
  return l > T(0) ? T(1) / l : (l != l ? l : T(0));
}

namespace detail {
// AVX-512 softmax pieces (attention_flash_avx512.cpp); only call them when
// flash_softmax_avx512_supported(). Exposed for the tests.
void exp_f32_avx512(const float* x, float* y, int64_t n);  // y = exp(x), ~1-2 ulp
// One online-softmax step on a transposed score block (nk x nq, query index
// last): updates m, l per query, writes corr = exp(m_old - m_new) and P in s,
// or, given p16, P rounded to bf16 (finite_to_bf16) in p16 (nk x nq) with s
// left as scores. Given o (o_rows x nq, Oᵀ), scales its columns by corr.
void softmax_block_cols_f32_avx512(float* s, int64_t nk, int64_t nq, float* m, float* l, float* corr,
                                   float* o = nullptr, int64_t o_rows = 0, uint16_t* p16 = nullptr);
// out row r (r < nq; row stride out_rs) = o[r·o_rs + e·o_cs] (e < cols) times
// inverse_normaliser(l[r]), as elem 0 = f32, 1 = bf16, 2 = f16 (round to
// nearest even; NaN stays NaN). flash:cpu's Oᵀ has o_cs = nq, efficient:cpu's O 1.
void store_out_avx512(const float* o, int64_t o_rs, int64_t o_cs, int64_t nq, int64_t cols, const float* l,
                      int elem, void* out, int64_t out_rs);
// The bf16 inputs' block step (Note [bf16 flash softmax step] in
// attention_flash.cpp; only where flash_bf16_step_supported()): as above
// with P always written to p16 and s only read, but m may stay below the
// column maximum (lazy rescaling: weights up to 2^8), exp to ~1e-4 relative
// and P rounded with vcvtne2ps2bf16 (subnormal weights flush to 0). s, o
// and p16 have row stride ld (0: nq), so a caller can step over a block's
// column groups (Note [Causal staircase]).
void softmax_block_cols_bf16_avx512bf16(const float* s, int64_t nk, int64_t nq, float* m, float* l, float* corr,
                                        float* o, int64_t o_rows, uint16_t* p16, int64_t ld = 0);
// w[i] = exp(s[i] - shift) rounded to bf16, i < n (shift >= every s[i]),
// with this file's exp (~7.5e-5 relative) and vcvtne2ps2bf16; returns the
// sum of the unrounded weights: efficient:cpu's bf16 weights in one pass,
// where flash_bf16_step_supported().
float exp_shifted_sum_to_bf16_avx512bf16(const float* s, int64_t n, float shift, uint16_t* w);
// dst[c·ld + r] = src[r·rs + c] for r < rows, c < cols: 16-bit values
// transposed (the bf16 and f16 kernels' Qᵀ, once per task), where
// flash_bf16_step_supported().
void transpose_u16_avx512bf16(const uint16_t* src, int64_t rs, int64_t rows, int64_t cols, uint16_t* dst, int64_t ld);
// y[i] = finite_to_bf16(x[i]) (bf16_round.h), i < n.
void round_bf16_avx512(const float* x, uint16_t* y, int64_t n);
// dst (rows x cols, contiguous) = the f16 rows at src (row stride rs, unit
// column stride) widened to fp32 with F16C.
void widen_f16_rows_avx512(const uint16_t* src, int64_t rs, int64_t rows, int64_t cols, float* dst);
float exp_shifted_sum_f32_avx512(float* s, int64_t n, float shift);  // exp_shifted_sum in one pass
float row_max_f32_avx512(const float* s, int64_t n, float init);     // NaN if any s[i] (or init) is NaN
// Their AVX2 twins (attention_flash_avx2.cpp; only where the CPU has AVX2,
// FMA and F16C). exp_f32_avx2 returns 0 below -86.9 instead of subnormals.
void exp_f32_avx2(const float* x, float* y, int64_t n);
void softmax_block_cols_f32_avx2(float* s, int64_t nk, int64_t nq, float* m, float* l, float* corr);
void widen_f16_rows_avx2(const uint16_t* src, int64_t rs, int64_t rows, int64_t cols, float* dst);
float exp_shifted_sum_f32_avx2(float* s, int64_t n, float shift);  // exp_shifted_sum in one pass
float row_max_f32_avx2(const float* s, int64_t n, float init);     // NaN if any s[i] (or init) is NaN
}  // namespace detail

}  // namespace bp::kernels::cpu
