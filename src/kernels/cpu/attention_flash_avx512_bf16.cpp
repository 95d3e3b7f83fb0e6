// The flash-attention softmax step for bf16 inputs where the GEMMs run on
// AVX512_BF16 (attention_flash.h, Note [bf16 flash softmax step] in
// attention_flash.cpp). Built with the AVX512_BF16 flags (Note [Source
// layout and globbing] in CMakeLists.txt); the caller checks
// gemm_isa_supported(GemmIsa::avx512_bf16) first.
//
// Against softmax_block_cols_f32_avx512 (attention_flash_avx512.cpp), which
// the fp32 path keeps, three things make the step about half as long:
// - exp as 2^t with t = (x - m)·log2(e) = n + f,
//   |f| <= 1/2 and 2^f by a degree-3 polynomial (7.5e-5 relative: P is
//   rounded to bf16, 2^-9 relative, right after; and an error in P's weights
//   enters numerator and normaliser alike, so the output moves by at most
//   that relative error times the spread of V);
// - lazy rescaling (as FlashAttention-3 and llama.cpp do): once a query has
//   a finite running maximum m, a block's weights are taken against that m
//   as long as no score exceeds it by more than 2^kLazyLog2 in weight. Then
//   the block is one pass (exp, row sums, P) with no maximum pass before it
//   and no rescaling of Oᵀ or l after it; the output divides by the l that
//   matches the m used, so the result is the same up to rounding. A block
//   where some score does exceed it is redone with the two-pass step (its P
//   is rewritten, nothing else was stored);
// - P rounded two vectors at a time by vcvtne2ps2bf16 (round to nearest
//   even, as finite_to_bf16 does; subnormal weights, below 1e-38 of the
//   largest, flush to 0 and NaN stays NaN) instead of five integer
//   instructions and a narrowing move per vector.

#include "kernels/cpu/gcc12_avx512_warnings.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/exp_poly.h"

namespace bp::kernels::cpu::detail {
namespace {

// A block's weights may reach 2^kLazyLog2 against a stale maximum (256: far
// inside bf16's and fp32's range, and the row sums of 10^5 keys stay far
// below fp32 overflow).
constexpr float kLazyLog2 = 8.0f;

// 2^f on |f| <= 1/2, highest degree first: a relative minimax fit (Lawson
// iterations on Chebyshev nodes), 7.5e-5 at most in fp32.
constexpr float kExp2Poly3[] = {5.517166e-2f, 2.4261113e-1f, 6.9326097e-1f, 9.9992806e-1f};

// 2^t for t >= -160 (or NaN, which stays NaN): t = n + f, 2^f by the
// polynomial, 2^n by vscalefps (which also underflows 2^-160 to 0).
inline __m512 exp2_clamped(__m512 t) {
  const __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(t, n);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kExp2Poly3[0]), f, _mm512_set1_ps(kExp2Poly3[1]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly3[2]));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly3[3]));
  return _mm512_scalef_ps(p, n);
}

// exp(x - m) as 2^t, t = (x - m)·log2e; -inf (masked) gives 0: vmaxps
// passes a NaN t (its second operand) through the clamp. The difference is
// taken first (exact near the maximum): one FMA x·log2e - m·log2e would
// round m·log2e at m's magnitude, and an additive mask of -3.4e38 (the
// usual "finfo.min") would even overflow it.
inline __m512 exp_shifted(__m512 x, __m512 m, __m512& t) {
  t = _mm512_mul_ps(_mm512_sub_ps(x, m), _mm512_set1_ps(kLog2e));
  return exp2_clamped(_mm512_max_ps(_mm512_set1_ps(-160.0f), t));
}

// Note [Fused exp shift]
// exp(x - m) as 2^(x·log2e - m·log2e) by one FMA, with m·log2e rounded once
// per column: that rounding scales every weight of the column, and the
// normaliser with them, by the same factor, so the output keeps it only
// through the corrections between blocks (exp_shifted's exact difference),
// off by at most an ulp of m·log2e: 2^-15 in the exponent for |m| <= 2^8,
// under the polynomial's error. Larger maxima (an additive mask of
// finfo.min would overflow m·log2e) take the difference first. One of the
// step's ~11 vector operations per 16 scores: +1-2% at L = 4096, D = 64
// and 128 (one thread, same process).
constexpr float kFusedShiftMax = 256.0f;

inline __m512 exp_fused(__m512 x, __m512 neg_mc, __m512& t) {
  t = _mm512_fmadd_ps(x, _mm512_set1_ps(kLog2e), neg_mc);
  return exp2_clamped(_mm512_max_ps(_mm512_set1_ps(-160.0f), t));
}

// Whether every active lane of base is within kFusedShiftMax (NaN: no).
template <int V>
inline bool fusable(const __m512 (&base)[V], const __mmask16 (&mk)[V]) {
  bool ok = true;
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v)
    ok &= _mm512_mask_cmp_ps_mask(mk[v], _mm512_abs_ps(base[v]), _mm512_set1_ps(kFusedShiftMax), _CMP_LE_OQ) == mk[v];
  return ok;
}

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

// Row c's weights of the chunk, rounded to bf16: vectors 2i and 2i + 1 by
// one vcvtne2ps2bf16 and one store.
template <int V>
inline void store_p(uint16_t* dst, const __m512 (&e)[V], const __mmask16 (&mk)[V]) {
#pragma GCC unroll 2
  for (int v = 0; v + 1 < V; v += 2) {
    const __m512i h = (__m512i)_mm512_cvtne2ps_pbh(e[v + 1], e[v]);
    _mm512_mask_storeu_epi16(dst + 16 * v, static_cast<__mmask32>(mk[v] | (uint32_t(mk[v + 1]) << 16)), h);
  }
  if constexpr (V % 2 == 1) _mm256_mask_storeu_epi16(dst + 16 * (V - 1), mk[V - 1], (__m256i)_mm512_cvtneps_pbh(e[V - 1]));
}

// Both steps' pass over the chunk's key rows: the weights exp(x - base)
// rounded into P, their column sums added to `sum`, and with kTrackMax the
// largest exponent seen per column in `tmax` (the lazy step's test that no
// score outgrew its stale maximum; a NaN t is dropped there and reaches l
// through the sum).
template <int V, bool kTrackMax, bool kFused>
inline void exp_rows(const float* s, int64_t nk, int64_t ld, int64_t r0, const __m512 (&base_in)[V],
                     const __mmask16 (&mk)[V], __m512 (&sum)[V], __m512 (&tmax)[V], uint16_t* p16) {
  __m512 base[V];  // kFused: -base·log2e (Note [Fused exp shift])
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v) base[v] = kFused ? _mm512_mul_ps(base_in[v], _mm512_set1_ps(-kLog2e)) : base_in[v];
  for (int64_t c = 0; c < nk; ++c) {
    const float* row = s + c * ld + r0;
    __m512 e[V];
    #pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      __m512 t;
      const __m512 x = _mm512_maskz_loadu_ps(mk[v], row + 16 * v);
      e[v] = kFused ? exp_fused(x, base[v], t) : exp_shifted(x, base[v], t);
      if constexpr (kTrackMax) tmax[v] = _mm512_max_ps(tmax[v], t);
      sum[v] = _mm512_add_ps(sum[v], e[v]);
    }
    store_p<V>(p16 + c * ld + r0, e, mk);
  }
}

// The lazy one-pass step on columns r0 .. r0 + 16·V (see the file comment);
// false, with nothing stored but P, when some score is too far above its m.
// The vector loops carry `#pragma GCC unroll`: unrolled late, GCC kept the
// sum and maximum arrays in memory too, a store of each per key row
// (causal D = 64: 0.77 -> 0.79 of the GEMM rate without them).
template <int V>
bool lazy_chunk(const float* s, int64_t nk, int64_t ld, int64_t r0, const __m512 (&mold)[V],
                const __mmask16 (&mk)[V], float* l, float* corr, uint16_t* p16) {
  __m512 base[V], sum[V], tmax[V];
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    base[v] = _mm512_maskz_mov_ps(mk[v], mold[v]);  // lanes past nq: 0, not -inf
    sum[v] = _mm512_setzero_ps();
    tmax[v] = _mm512_set1_ps(-__builtin_inff());
  }
  if (fusable<V>(base, mk))
    exp_rows<V, true, true>(s, nk, ld, r0, base, mk, sum, tmax, p16);
  else
    exp_rows<V, true, false>(s, nk, ld, r0, base, mk, sum, tmax, p16);
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v)
    if (_mm512_mask_cmp_ps_mask(mk[v], tmax[v], _mm512_set1_ps(kLazyLog2), _CMP_GT_OQ) != 0) return false;
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    if (mk[v] == 0) continue;
    const __m512 lo = _mm512_maskz_loadu_ps(mk[v], l + r0 + 16 * v);
    _mm512_mask_storeu_ps(l + r0 + 16 * v, mk[v], _mm512_add_ps(lo, sum[v]));
    _mm512_mask_storeu_ps(corr + r0 + 16 * v, mk[v], _mm512_set1_ps(1.0f));
  }
  return true;
}

// Columns r0 .. r0 + 16·V of the block (the last chunk narrower: V is the
// number of vectors that hold any column). The two-pass step is
// softmax_cols_chunk's of attention_flash_avx512.cpp (NaN kept as the
// maximum, all-masked columns kept at m = -inf), with this file's exp and
// rounding.
template <int V>
void chunk(const float* s, int64_t nk, int64_t nq, int64_t ld, int64_t r0, float* m, float* l, float* corr,
           float* o, int64_t o_rows, uint16_t* p16) {
  const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
  __mmask16 mk[V], finite = 0;
  __m512 mold[V];
  bool lazy = true;
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const int64_t left = nq - r0 - 16 * v;
    mk[v] = left <= 0 ? __mmask16(0) : tail_mask(left);
    mold[v] = _mm512_mask_loadu_ps(ninf, mk[v], m + r0 + 16 * v);
    // fpclass 0x99: QNaN, SNaN, +inf, -inf.
    finite = static_cast<__mmask16>(mk[v] & ~_mm512_fpclass_ps_mask(mold[v], 0x99));
    lazy &= finite == mk[v];
  }
  if (lazy && lazy_chunk<V>(s, nk, ld, r0, mold, mk, l, corr, p16)) return;

  __mmask16 ord[V];
  __m512 mx[V], sum[V];
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    mx[v] = mold[v];
    ord[v] = _mm512_mask_cmp_ps_mask(mk[v], mold[v], mold[v], _CMP_ORD_Q);  // lanes with no NaN so far
    sum[v] = _mm512_setzero_ps();
  }
  for (int64_t c = 0; c < nk; ++c) {
    const float* row = s + c * ld + r0;
    #pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __m512 x = _mm512_mask_loadu_ps(ninf, mk[v], row + 16 * v);
      mx[v] = _mm512_max_ps(mx[v], x);
      ord[v] = _mm512_mask_cmp_ps_mask(ord[v], x, x, _CMP_ORD_Q);
    }
  }
  __m512 base[V];
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    // Note [NaN in attention]: vmaxps drops a NaN operand, the mask keeps it.
    mx[v] = _mm512_mask_mov_ps(mx[v], static_cast<__mmask16>(mk[v] & ~ord[v]), _mm512_set1_ps(__builtin_nanf("")));
    // All keys masked so far: m stays -inf and the shift is 0 (exp(-inf) = 0, not exp(NaN)).
    const __mmask16 dead = _mm512_cmp_ps_mask(mx[v], ninf, _CMP_EQ_OQ);
    base[v] = _mm512_mask_mov_ps(mx[v], dead, _mm512_setzero_ps());
  }
  __m512 no_max[V];  // not tracked: the maximum is known
  if (fusable<V>(base, mk))
    exp_rows<V, false, true>(s, nk, ld, r0, base, mk, sum, no_max, p16);
  else
    exp_rows<V, false, false>(s, nk, ld, r0, base, mk, sum, no_max, p16);
  __m512 cr[V];
  __mmask16 rescale = 0;  // lanes whose correction is not 1
  #pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    cr[v] = _mm512_set1_ps(1.0f);
    if (mk[v] == 0) continue;
    // exp(m_old - m_new), exactly 1 where the maximum did not move (the
    // polynomial's 2^0 is not 1) and 0 from a column's first key on.
    __m512 t;
    cr[v] = _mm512_mask_mov_ps(exp_shifted(mold[v], base[v], t), _mm512_cmp_ps_mask(mold[v], base[v], _CMP_EQ_OQ),
                               _mm512_set1_ps(1.0f));
    rescale |= _mm512_mask_cmp_ps_mask(mk[v], cr[v], _mm512_set1_ps(1.0f), _CMP_NEQ_UQ);
    const __m512 lo = _mm512_maskz_loadu_ps(mk[v], l + r0 + 16 * v);
    _mm512_mask_storeu_ps(l + r0 + 16 * v, mk[v], _mm512_fmadd_ps(lo, cr[v], sum[v]));
    _mm512_mask_storeu_ps(m + r0 + 16 * v, mk[v], mx[v]);
    _mm512_mask_storeu_ps(corr + r0 + 16 * v, mk[v], cr[v]);
  }
  if (o != nullptr && rescale != 0)
    for (int64_t e = 0; e < o_rows; ++e) {
      float* orow = o + e * ld + r0;
      #pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        if (mk[v] == 0) break;
        _mm512_mask_storeu_ps(orow + 16 * v, mk[v], _mm512_mul_ps(_mm512_maskz_loadu_ps(mk[v], orow + 16 * v), cr[v]));
      }
    }
}

}  // namespace

void transpose_u16_avx512bf16(const uint16_t* src, int64_t rs, int64_t rows, int64_t cols, uint16_t* dst,
                              int64_t ld) {
  // Blocks of 16 rows x 32 columns, as a 16 x 16 transpose of 32-bit column
  // pairs (unpacks within 128-bit lanes, then a 4 x 4 transpose of the
  // lanes); each transposed pair row splits into its low words (column c)
  // and high words (c + 1) by vpmovdw. Ragged blocks load and store masked
  // (missing rows are zero and not stored). Gathers of the pairs were
  // slower than the element loop on Zen 5.
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t nr = std::min<int64_t>(16, rows - r0);
    const __mmask16 rmask = static_cast<__mmask16>(nr >= 16 ? 0xFFFF : (1u << nr) - 1u);
    for (int64_t c0 = 0; c0 < cols; c0 += 32) {
      const int64_t nc = std::min<int64_t>(32, cols - c0);
      const __mmask32 cmask = nc >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << nc) - 1u);
      __m512i r[16], t[16], u[16];
      #pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = i < nr ? _mm512_maskz_loadu_epi16(cmask, src + (r0 + i) * rs + c0) : _mm512_setzero_si512();
      #pragma GCC unroll 8
      for (int i = 0; i < 16; i += 2)
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]), t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
      // u[4g + m], lane L: pair column 4L + m of rows 4g .. 4g + 3.
      #pragma GCC unroll 4
      for (int g = 0; g < 16; g += 4) {
        u[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]), u[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        u[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]), u[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
      }
      #pragma GCC unroll 4
      for (int m = 0; m < 4; ++m) {
        const __m512i v0 = _mm512_shuffle_i32x4(u[m], u[4 + m], 0x44), v1 = _mm512_shuffle_i32x4(u[m], u[4 + m], 0xEE);
        const __m512i v2 = _mm512_shuffle_i32x4(u[8 + m], u[12 + m], 0x44);
        const __m512i v3 = _mm512_shuffle_i32x4(u[8 + m], u[12 + m], 0xEE);
        const __m512i col[4] = {_mm512_shuffle_i32x4(v0, v2, 0x88), _mm512_shuffle_i32x4(v0, v2, 0xDD),
                                _mm512_shuffle_i32x4(v1, v3, 0x88), _mm512_shuffle_i32x4(v1, v3, 0xDD)};
        #pragma GCC unroll 4
        for (int L = 0; L < 4; ++L) {
          const int64_t c = c0 + 2 * (4 * L + m);  // the pair's first column
          if (c < cols) _mm256_mask_storeu_epi16(dst + c * ld + r0, rmask, _mm512_cvtepi32_epi16(col[L]));
          if (c + 1 < cols)
            _mm256_mask_storeu_epi16(dst + (c + 1) * ld + r0, rmask,
                                     _mm512_cvtepi32_epi16(_mm512_srli_epi32(col[L], 16)));
        }
      }
    }
  }
}

float exp_shifted_sum_to_bf16_avx512bf16(const float* s, int64_t n, float shift, uint16_t* w) {
  const __m512 m = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps(), sum2 = sum, t;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 e = exp_shifted(_mm512_loadu_ps(s + i), m, t);
    const __m512 f = exp_shifted(_mm512_loadu_ps(s + i + 16), m, t);
    _mm512_storeu_si512(w + i, (__m512i)_mm512_cvtne2ps_pbh(f, e));
    sum = _mm512_add_ps(sum, e), sum2 = _mm512_add_ps(sum2, f);
  }
  for (; i < n; i += 16) {
    const __mmask16 mk = tail_mask(n - i);
    const __m512 e = _mm512_maskz_mov_ps(mk, exp_shifted(_mm512_maskz_loadu_ps(mk, s + i), m, t));
    _mm256_mask_storeu_epi16(w + i, mk, (__m256i)_mm512_cvtneps_pbh(e));
    sum = _mm512_add_ps(sum, e);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(sum, sum2));
}

void softmax_block_cols_bf16_avx512bf16(const float* s, int64_t nk, int64_t nq, float* m, float* l, float* corr,
                                        float* o, int64_t o_rows, uint16_t* p16, int64_t ld) {
  if (ld == 0) ld = nq;
  int64_t r0 = 0;
  for (; r0 + 64 <= nq; r0 += 64) chunk<4>(s, nk, nq, ld, r0, m, l, corr, o, o_rows, p16);
  switch ((nq - r0 + 15) / 16) {
    case 1: return chunk<1>(s, nk, nq, ld, r0, m, l, corr, o, o_rows, p16);
    case 2: return chunk<2>(s, nk, nq, ld, r0, m, l, corr, o, o_rows, p16);
    case 3: return chunk<3>(s, nk, nq, ld, r0, m, l, corr, o, o_rows, p16);
    case 4: return chunk<4>(s, nk, nq, ld, r0, m, l, corr, o, o_rows, p16);
    default: return;  // nq reached
  }
}

}  // namespace bp::kernels::cpu::detail
