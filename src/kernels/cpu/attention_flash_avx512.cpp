// AVX-512 pieces of the flash-attention softmax (attention_flash.h). This
// file is compiled with AVX-512 flags (Note [Source layout and globbing] in
// CMakeLists.txt); callers check flash_softmax_avx512_supported() first.
//
// Why: with scalar std::exp the online softmax cost more than both GEMMs
// together (one exp per score, ~10-20 cycles each, against 4·D flops of GEMM
// per score), so the kernel ran at ~35 GFLOP/s at D = 64.
//
// exp(x): x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two for an exact
// reduction), exp(r) by the Cephes expf polynomial (degree 6, ~1 ulp on that
// range), then 2^n applied with vscalefps, which also gives correct
// underflow to subnormals / 0 and overflow to inf without exponent-bit
// tricks. x is clamped to [-104, 89] first so -inf and +inf do not produce
// inf - inf in the reduction (exp(-104) is below the smallest subnormal, so
// the result is still 0; exp(89) still overflows to inf). NaN passes through
// the clamps (vmaxps/vminps return their second operand on NaN).

#include "kernels/cpu/gcc12_avx512_warnings.h"

#include <immintrin.h>

#include <cstddef>

#include <cstdint>

#include "kernels/cpu/exp_poly.h"

namespace bp::kernels::cpu::detail {

namespace {

// exp of x already clamped to [-104, 89], with the polynomial `poly` (highest
// coefficient first): exp(r) = 1 + r + r²·P(r) is evaluated as
// 1 + r·(1 + r·P(r)), all FMAs (7 instead of 5 FMAs, a multiply, an add and
// an FMA: the softmax issues one exp per score, so every instruction here is
// ~4% of its time).
template <std::size_t N>
inline __m512 exp512_poly(__m512 x, const float (&poly)[N]) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(poly[0]);
  for (std::size_t i = 1; i < N; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(poly[i]));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

inline __m512 exp512_clamped(__m512 x) { return exp512_poly(x, kExpPoly); }

inline __m512 exp512(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  return exp512_clamped(_mm512_min_ps(_mm512_set1_ps(89.0f), x));
}

// exp(x) for x <= 0, -inf or NaN: a softmax's x - max. Only -inf needs the
// clamp (it would make inf - inf in the reduction); the polynomial is the
// shorter kExpPolySoftmax (~2 ulp instead of ~1).
inline __m512 exp512_nonpos(__m512 x) {
  return exp512_poly(_mm512_max_ps(_mm512_set1_ps(-104.0f), x), kExpPolySoftmax);
}

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
}

// bf16 bits of 16 floats, rounded to nearest even: finite_to_bf16
// (bf16_round.h) on every lane, so the vector and scalar paths agree bit for
// bit (a NaN with payload bits in the upper half stays NaN).
inline __m256i finite_to_bf16_512(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb);
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

}  // namespace

void exp_f32_avx512(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mk = tail_mask(n - i);
    _mm512_mask_storeu_ps(y + i, mk, exp512(_mm512_maskz_loadu_ps(mk, x + i)));
  }
}

}  // namespace bp::kernels::cpu::detail

namespace bp::kernels::cpu::detail {

namespace {

// Note [Lazy fp32 softmax step]
// As the bf16 step does (attention_flash_avx512_bf16.cpp), fp32 takes a
// block's weights against a query's stale running maximum m while no score
// exceeds m by more than kLazyLn (weights up to 2^8), so a block is one
// pass: no maximum pass before it, no correction of l and Oᵀ after it. Its
// weights overwrite the scores in place, so the pass checks each key row
// before it writes it; at the first row with a score too far above m it
// stops, and the two-pass step takes over from that row: the maximum of the
// rows left, the weights already written scaled by exp(m - m') (at most
// 2^8 each, so exactly what exp(s - m') would give up to a rounding), then
// the rows left against m'. The first block of a task (m = -inf), a NaN m
// and the bf16 P of CPUs without AVX512_BF16 keep the two-pass step.
// 2.4% of causal fp32 time at L = 4096, D = 64 was the maximum pass.
constexpr float kLazyLn = 5.5451774f;  // 8·ln 2

// Columns r0 .. r0 + 16·V of the block (the last chunk narrower: V is the
// number of vectors that hold any column, so a decode-shaped block of 8
// queries runs one masked vector, not four).
template <int V>
void softmax_cols_chunk(float* s, int64_t nk, int64_t nq, int64_t r0, float* m, float* l, float* corr, float* o,
                        int64_t o_rows, uint16_t* p16) {
  const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
  __mmask16 mk[V], ord[V];
  __m512 mold[V], mx[V], sum[V];
  bool lazy = p16 == nullptr;
  for (int v = 0; v < V; ++v) {
    const int64_t left = nq - r0 - 16 * v;
    mk[v] = left <= 0 ? __mmask16(0) : tail_mask(left);
    mold[v] = _mm512_mask_loadu_ps(ninf, mk[v], m + r0 + 16 * v);
    mx[v] = mold[v];
    // Lanes with no NaN so far, narrowed by a masked compare (one
    // instruction; OR-ing NaN masks went through general registers).
    ord[v] = _mm512_mask_cmp_ps_mask(mk[v], mold[v], mold[v], _CMP_ORD_Q);
    sum[v] = _mm512_setzero_ps();
    // fpclass 0x99: QNaN, SNaN, +inf, -inf.
    lazy &= (mk[v] & ~_mm512_fpclass_ps_mask(mold[v], 0x99)) == mk[v];
  }
  // Note [Lazy fp32 softmax step]: key rows before c0 are weights against m.
  int64_t c0 = 0;
  if (lazy) {
    __m512 stale[V];
    for (int v = 0; v < V; ++v) stale[v] = _mm512_maskz_mov_ps(mk[v], mold[v]);
    for (; c0 < nk; ++c0) {
      float* row = s + c0 * nq + r0;
      __m512 d[V];
      __mmask16 over = 0;
      for (int v = 0; v < V; ++v) {
        d[v] = _mm512_sub_ps(_mm512_maskz_loadu_ps(mk[v], row + 16 * v), stale[v]);
        over |= _mm512_cmp_ps_mask(d[v], _mm512_set1_ps(kLazyLn), _CMP_GT_OQ);
      }
      if (over != 0) break;
      for (int v = 0; v < V; ++v) {
        const __m512 e = exp512_nonpos(d[v]);
        _mm512_mask_storeu_ps(row + 16 * v, mk[v], e);
        sum[v] = _mm512_add_ps(sum[v], e);
      }
    }
    if (c0 == nk) {  // m and Oᵀ stay; l gains the block's weights
      for (int v = 0; v < V; ++v) {
        if (mk[v] == 0) continue;
        const __m512 lo = _mm512_maskz_loadu_ps(mk[v], l + r0 + 16 * v);
        _mm512_mask_storeu_ps(l + r0 + 16 * v, mk[v], _mm512_add_ps(lo, sum[v]));
        _mm512_mask_storeu_ps(corr + r0 + 16 * v, mk[v], _mm512_set1_ps(1.0f));
      }
      return;
    }
  }
  for (int64_t c = c0; c < nk; ++c) {
    const float* row = s + c * nq + r0;
    for (int v = 0; v < V; ++v) {
      const __m512 x = _mm512_mask_loadu_ps(ninf, mk[v], row + 16 * v);
      mx[v] = _mm512_max_ps(mx[v], x);
      ord[v] = _mm512_mask_cmp_ps_mask(ord[v], x, x, _CMP_ORD_Q);
    }
  }
  __m512 base[V], cr[V];
  for (int v = 0; v < V; ++v) {
    // vmaxps drops a NaN operand; a column that saw one keeps NaN as its
    // maximum (Note [NaN in attention] in attention_flash.h).
    mx[v] = _mm512_mask_mov_ps(mx[v], static_cast<__mmask16>(mk[v] & ~ord[v]), _mm512_set1_ps(__builtin_nanf("")));
    // A column whose keys are all masked so far keeps m = -inf; subtracting
    // 0 instead gives exp(-inf) = 0 for it rather than exp(NaN).
    const __mmask16 dead = _mm512_cmp_ps_mask(mx[v], ninf, _CMP_EQ_OQ);
    base[v] = _mm512_mask_mov_ps(mx[v], dead, _mm512_setzero_ps());
    cr[v] = mk[v] == 0 ? _mm512_set1_ps(1.0f) : exp512(_mm512_sub_ps(mold[v], base[v]));
    sum[v] = _mm512_mul_ps(sum[v], cr[v]);  // the lazy rows' weights, moved to the new maximum
  }
  for (int64_t c = 0; c < c0; ++c) {
    float* row = s + c * nq + r0;
    for (int v = 0; v < V; ++v)
      _mm512_mask_storeu_ps(row + 16 * v, mk[v], _mm512_mul_ps(_mm512_maskz_loadu_ps(mk[v], row + 16 * v), cr[v]));
  }
  for (int64_t c = c0; c < nk; ++c) {
    float* row = s + c * nq + r0;
    for (int v = 0; v < V; ++v) {
      const __m512 e = exp512_nonpos(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk[v], row + 16 * v), base[v]));
      if (p16 != nullptr)
        _mm256_mask_storeu_epi16(p16 + c * nq + r0 + 16 * v, mk[v], finite_to_bf16_512(e));
      else
        _mm512_mask_storeu_ps(row + 16 * v, mk[v], e);
      sum[v] = _mm512_add_ps(sum[v], e);
    }
  }
  __mmask16 rescale = 0;  // lanes whose correction is not 1
  for (int v = 0; v < V; ++v) {
    if (mk[v] == 0) continue;
    rescale |= _mm512_mask_cmp_ps_mask(mk[v], cr[v], _mm512_set1_ps(1.0f), _CMP_NEQ_UQ);
    const __m512 lo = _mm512_maskz_loadu_ps(mk[v], l + r0 + 16 * v);
    // sum already holds the lazy rows scaled by cr: l·cr + sum.
    _mm512_mask_storeu_ps(l + r0 + 16 * v, mk[v], _mm512_fmadd_ps(lo, cr[v], sum[v]));
    _mm512_mask_storeu_ps(m + r0 + 16 * v, mk[v], mx[v]);
    _mm512_mask_storeu_ps(corr + r0 + 16 * v, mk[v], cr[v]);
  }
  // Oᵀ columns r0.. scaled by their correction while it is in registers;
  // skipped once the running maxima settle (every correction exactly 1).
  if (o != nullptr && rescale != 0)
    for (int64_t e = 0; e < o_rows; ++e) {
      float* orow = o + e * nq + r0;
      for (int v = 0; v < V; ++v) {
        if (mk[v] == 0) break;
        _mm512_mask_storeu_ps(orow + 16 * v, mk[v], _mm512_mul_ps(_mm512_maskz_loadu_ps(mk[v], orow + 16 * v), cr[v]));
      }
    }
}

}  // namespace

// The online-softmax step on a transposed score block: s is nk x nq (row c =
// key j0 + c, column r = query i0 + r), so every per-query quantity is a
// contiguous vector over r and both passes run down the columns 64 queries
// (4 vectors) at a time. See softmax_block_cols in attention_flash.cpp for
// the portable twin and the meaning of m, l, corr.
void softmax_block_cols_f32_avx512(float* s, int64_t nk, int64_t nq, float* m, float* l, float* corr, float* o,
                                   int64_t o_rows, uint16_t* p16) {
  int64_t r0 = 0;
  for (; r0 + 64 <= nq; r0 += 64) softmax_cols_chunk<4>(s, nk, nq, r0, m, l, corr, o, o_rows, p16);
  switch ((nq - r0 + 15) / 16) {
    case 1: return softmax_cols_chunk<1>(s, nk, nq, r0, m, l, corr, o, o_rows, p16);
    case 2: return softmax_cols_chunk<2>(s, nk, nq, r0, m, l, corr, o, o_rows, p16);
    case 3: return softmax_cols_chunk<3>(s, nk, nq, r0, m, l, corr, o, o_rows, p16);
    case 4: return softmax_cols_chunk<4>(s, nk, nq, r0, m, l, corr, o, o_rows, p16);
    default: return;  // nq reached
  }
}

void store_out_avx512(const float* o, int64_t o_rs, int64_t o_cs, int64_t nq, int64_t cols, const float* l,
                      int elem, void* out, int64_t out_rs) {
  // out row r = (o[r·o_rs + e·o_cs] for e < cols) / l[r]: 16 values of a row
  // at a time, loaded (o_cs = 1) or gathered (Oᵀ: o_cs = nq), scaled and narrowed.
  const __m512i idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                         _mm512_set1_epi32(static_cast<int>(o_cs)));
  for (int64_t r = 0; r < nq; ++r) {
    const float lr = l[r];
    const float inv = lr > 0.0f ? 1.0f / lr : (lr != lr ? lr : 0.0f);  // inverse_normaliser
    const __m512 vinv = _mm512_set1_ps(inv);
    for (int64_t e = 0; e < cols; e += 16) {
      const __mmask16 mk = tail_mask(cols - e);
      const float* src = o + r * o_rs + e * o_cs;
      const __m512 x = _mm512_mul_ps(
          o_cs == 1 ? _mm512_maskz_loadu_ps(mk, src) : _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mk, idx, src, 4),
          vinv);
      if (elem == 0) {
        _mm512_mask_storeu_ps(static_cast<float*>(out) + r * out_rs + e, mk, x);
      } else if (elem == 1) {  // bf16: round to nearest even; NaN stays a quiet NaN
        const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
        __m256i h = finite_to_bf16_512(x);
        const __m256i hi = _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(x), 16));
        h = _mm256_mask_mov_epi16(h, nan, _mm256_or_si256(hi, _mm256_set1_epi16(0x40)));
        _mm256_mask_storeu_epi16(static_cast<uint16_t*>(out) + r * out_rs + e, mk, h);
      } else {  // f16, round to nearest even
        _mm256_mask_storeu_epi16(static_cast<uint16_t*>(out) + r * out_rs + e, mk,
                                 _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
    }
  }
}

void round_bf16_avx512(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mk = tail_mask(n - i);
    _mm256_mask_storeu_epi16(y + i, mk, finite_to_bf16_512(_mm512_maskz_loadu_ps(mk, x + i)));
  }
}

void widen_f16_rows_avx512(const uint16_t* src, int64_t rs, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* in = src + r * rs;
    float* out = dst + r * cols;
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16)
      _mm512_storeu_ps(out + c, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + c))));
    if (c < cols) {
      const __mmask16 tail = static_cast<__mmask16>((1u << (cols - c)) - 1);
      _mm512_mask_storeu_ps(out + c, tail, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail, in + c)));
    }
  }
}

}  // namespace bp::kernels::cpu::detail

namespace bp::kernels::cpu::detail {

// The per-row softmax pieces of efficient:cpu and math:any at AVX-512 width
// (their AVX2 twins are in attention_flash_avx2.cpp). Scalar row_max was 45%
// of efficient:cpu's time at L = 4096, D = 64 on Zen 5.
float row_max_f32_avx512(const float* s, int64_t n, float init) {
  __m512 mx = _mm512_set1_ps(init), mx2 = mx;
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {  // two chains: vmaxps latency
    const __m512 x = _mm512_loadu_ps(s + i), y = _mm512_loadu_ps(s + i + 16);
    nan |= _mm512_cmp_ps_mask(x, y, _CMP_UNORD_Q);
    mx = _mm512_max_ps(mx, x), mx2 = _mm512_max_ps(mx2, y);
  }
  for (; i < n; i += 16) {
    const __mmask16 mk = tail_mask(n - i);
    const __m512 x = _mm512_mask_loadu_ps(_mm512_set1_ps(init), mk, s + i);
    nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    mx = _mm512_max_ps(mx, x);
  }
  // Note [NaN in attention]: a NaN anywhere (or in init) is the maximum.
  if (nan != 0 || init != init) return __builtin_nanf("");
  return _mm512_reduce_max_ps(_mm512_max_ps(mx, mx2));
}

float exp_shifted_sum_f32_avx512(float* s, int64_t n, float shift) {
  const __m512 sh = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps(), sum2 = sum;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 e = exp512_nonpos(_mm512_sub_ps(_mm512_loadu_ps(s + i), sh));
    const __m512 f = exp512_nonpos(_mm512_sub_ps(_mm512_loadu_ps(s + i + 16), sh));
    _mm512_storeu_ps(s + i, e), _mm512_storeu_ps(s + i + 16, f);
    sum = _mm512_add_ps(sum, e), sum2 = _mm512_add_ps(sum2, f);
  }
  for (; i < n; i += 16) {
    const __mmask16 mk = tail_mask(n - i);
    const __m512 e = exp512_nonpos(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk, s + i), sh));
    _mm512_mask_storeu_ps(s + i, mk, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(mk, e));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(sum, sum2));
}

}  // namespace bp::kernels::cpu::detail
