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

// GCC 12's unmasked AVX-512 intrinsics start from _mm512_undefined_ps() and
// warn about it once inlined (GCC PR105593, fixed in 13): a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/exp_poly.h"

namespace bp::kernels::cpu::detail {

namespace {

inline __m512 exp512(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);
  x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpPoly[i]));
  const __m512 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

inline __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1u);
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

// The online-softmax step on a transposed score block: s is nk x nq (row c =
// key j0 + c, column r = query i0 + r), so every per-query quantity is a
// contiguous vector over r and both passes run down the columns 64 queries
// (4 vectors) at a time. See softmax_block_cols in attention_flash.cpp for
// the portable twin and the meaning of m, l, corr.
void softmax_block_cols_f32_avx512(float* s, int64_t nk, int64_t nq, float* m, float* l, float* corr) {
  constexpr int V = 4;
  const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
  for (int64_t r0 = 0; r0 < nq; r0 += 16 * V) {
    __mmask16 mk[V], nan[V];
    __m512 mold[V], mx[V], sum[V];
    for (int v = 0; v < V; ++v) {
      const int64_t left = nq - r0 - 16 * v;
      mk[v] = left <= 0 ? __mmask16(0) : tail_mask(left);
      mold[v] = _mm512_mask_loadu_ps(ninf, mk[v], m + r0 + 16 * v);
      mx[v] = mold[v];
      nan[v] = _mm512_cmp_ps_mask(mold[v], mold[v], _CMP_UNORD_Q);
      sum[v] = _mm512_setzero_ps();
    }
    for (int64_t c = 0; c < nk; ++c) {
      const float* row = s + c * nq + r0;
      for (int v = 0; v < V; ++v) {
        const __m512 x = _mm512_mask_loadu_ps(ninf, mk[v], row + 16 * v);
        mx[v] = _mm512_max_ps(mx[v], x);
        nan[v] |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
      }
    }
    __m512 base[V];
    for (int v = 0; v < V; ++v) {
      // vmaxps drops a NaN operand; a column that saw one keeps NaN as its
      // maximum (Note [NaN in attention] in attention_flash.h).
      mx[v] = _mm512_mask_mov_ps(mx[v], nan[v], _mm512_set1_ps(__builtin_nanf("")));
      // A column whose keys are all masked so far keeps m = -inf; subtracting
      // 0 instead gives exp(-inf) = 0 for it rather than exp(NaN).
      const __mmask16 dead = _mm512_cmp_ps_mask(mx[v], ninf, _CMP_EQ_OQ);
      base[v] = _mm512_mask_mov_ps(mx[v], dead, _mm512_setzero_ps());
    }
    for (int64_t c = 0; c < nk; ++c) {
      float* row = s + c * nq + r0;
      for (int v = 0; v < V; ++v) {
        const __m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk[v], row + 16 * v), base[v]));
        _mm512_mask_storeu_ps(row + 16 * v, mk[v], e);
        sum[v] = _mm512_add_ps(sum[v], e);
      }
    }
    for (int v = 0; v < V; ++v) {
      if (mk[v] == 0) break;
      const __m512 cr = exp512(_mm512_sub_ps(mold[v], base[v]));
      const __m512 lo = _mm512_maskz_loadu_ps(mk[v], l + r0 + 16 * v);
      _mm512_mask_storeu_ps(l + r0 + 16 * v, mk[v], _mm512_fmadd_ps(lo, cr, sum[v]));
      _mm512_mask_storeu_ps(m + r0 + 16 * v, mk[v], mx[v]);
      _mm512_mask_storeu_ps(corr + r0 + 16 * v, mk[v], cr);
    }
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
