// AVX2 + FMA + F16C pieces of the attention softmax (attention_flash.h),
// the 8-lane twins of attention_flash_avx512.cpp. This file is compiled with
// AVX2 flags (Note [Source layout and globbing] in CMakeLists.txt); callers
// reach it only through softmax_vec_for(), which checks the CPU.
//
// Why: on an AVX2 machine (Zen 3 here) the scalar std::exp of the portable
// softmax made flash:cpu run at half of PyTorch's speed: one exp per score,
// ~15-20 cycles, against 4·D flops of GEMM per score at 32 flops a cycle.
//
// exp(x): the reduction and polynomial of exp512 (exp_poly.h: x = n·ln2 + r, Cephes'
// degree-6 expf polynomial, ~1 ulp), but AVX2 has no vscalefps, so 2^n is
// built in the exponent bits. To keep that in range, x is clamped to
// [-86.9, 88.7228] and the scale applied as 2^(n-1)·2 (n runs to 128 at
// the top). Below -86.9 the result is 0 (the true value is under 2.6e-38:
// nothing a softmax can see), above ln(FLT_MAX) it is +inf, and NaN stays
// NaN (vmaxps/vminps return their second operand, x, on NaN, and the range
// compares are false for it).

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/exp_poly.h"

namespace bp::kernels::cpu::detail {

namespace {

inline __m256 exp256(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-86.9f), hi = _mm256_set1_ps(88.7228317f);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  const __m256 over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
  x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[i]));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^(n-1) from its exponent field (n - 1 + 127, in [1, 254] after the clamp), times 2.
  const __m256i field = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(126)), 23);
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(field)), _mm256_set1_ps(2.0f));
  y = _mm256_andnot_ps(under, y);
  return _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_inff()), over);
}

// Lanes [0, left) of a group of 8 (all when left >= 8), as a load/store mask.
inline __m256i lane_mask(int64_t left) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left < 8 ? left : 8)), idx);
}

}  // namespace

void exp_f32_avx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp256(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mk = lane_mask(n - i);
    _mm256_maskstore_ps(y + i, mk, exp256(_mm256_maskload_ps(x + i, mk)));
  }
}

// The online-softmax step on a transposed score block (nk x nq, query index
// last), 32 queries (4 vectors) per pass down the columns: the AVX2 twin of
// softmax_block_cols_f32_avx512, with the same meaning of m, l and corr.
void softmax_block_cols_f32_avx2(float* s, int64_t nk, int64_t nq, float* m, float* l, float* corr) {
  constexpr int V = 4;
  const __m256 ninf = _mm256_set1_ps(-__builtin_inff());
  const __m256 qnan = _mm256_set1_ps(__builtin_nanf(""));
  for (int64_t r0 = 0; r0 < nq; r0 += 8 * V) {
    __m256i mk[V];
    __m256 on[V], nan[V], mold[V], mx[V], sum[V];
    for (int v = 0; v < V; ++v) {
      const int64_t left = nq - r0 - 8 * v;
      mk[v] = lane_mask(left > 0 ? left : 0);
      on[v] = _mm256_castsi256_ps(mk[v]);
      mold[v] = _mm256_blendv_ps(ninf, _mm256_maskload_ps(m + r0 + 8 * v, mk[v]), on[v]);
      mx[v] = mold[v];
      nan[v] = _mm256_cmp_ps(mold[v], mold[v], _CMP_UNORD_Q);
      sum[v] = _mm256_setzero_ps();
    }
    for (int64_t c = 0; c < nk; ++c) {
      const float* row = s + c * nq + r0;
      for (int v = 0; v < V; ++v) {
        const __m256 x = _mm256_blendv_ps(ninf, _mm256_maskload_ps(row + 8 * v, mk[v]), on[v]);
        mx[v] = _mm256_max_ps(mx[v], x);
        nan[v] = _mm256_or_ps(nan[v], _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
      }
    }
    __m256 base[V];
    for (int v = 0; v < V; ++v) {
      // Note [NaN in attention]: a column that saw a NaN keeps NaN as its maximum.
      mx[v] = _mm256_blendv_ps(mx[v], qnan, nan[v]);
      // A column with every key masked so far keeps m = -inf and shifts by 0.
      base[v] = _mm256_andnot_ps(_mm256_cmp_ps(mx[v], ninf, _CMP_EQ_OQ), mx[v]);
    }
    for (int64_t c = 0; c < nk; ++c) {
      float* row = s + c * nq + r0;
      for (int v = 0; v < V; ++v) {
        const __m256 e =
            _mm256_and_ps(on[v], exp256(_mm256_sub_ps(_mm256_maskload_ps(row + 8 * v, mk[v]), base[v])));
        _mm256_maskstore_ps(row + 8 * v, mk[v], e);
        sum[v] = _mm256_add_ps(sum[v], e);
      }
    }
    for (int v = 0; v < V && r0 + 8 * v < nq; ++v) {
      const __m256 cr = exp256(_mm256_sub_ps(mold[v], base[v]));
      const __m256 lo = _mm256_maskload_ps(l + r0 + 8 * v, mk[v]);
      _mm256_maskstore_ps(l + r0 + 8 * v, mk[v], _mm256_fmadd_ps(lo, cr, sum[v]));
      _mm256_maskstore_ps(m + r0 + 8 * v, mk[v], mx[v]);
      _mm256_maskstore_ps(corr + r0 + 8 * v, mk[v], cr);
    }
  }
}

// sum of s[i] = exp(s[i] - shift), in one pass (exp_shifted_sum's AVX2 body).
float exp_shifted_sum_f32_avx2(float* s, int64_t n, float shift) {
  const __m256 sh = _mm256_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(s + i), sh));
    _mm256_storeu_ps(s + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (i < n) {
    const __m256i mk = lane_mask(n - i);
    const __m256 e = _mm256_and_ps(_mm256_castsi256_ps(mk), exp256(_mm256_sub_ps(_mm256_maskload_ps(s + i, mk), sh)));
    _mm256_maskstore_ps(s + i, mk, e);
    sum = _mm256_add_ps(sum, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// max(init, s[0..n)), NaN when any of them is NaN (Note [NaN in attention]).
float row_max_f32_avx2(const float* s, int64_t n, float init) {
  __m256 mx = _mm256_set1_ps(init), nan = _mm256_cmp_ps(mx, mx, _CMP_UNORD_Q);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(s + i);
    mx = _mm256_max_ps(mx, x);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, mx);
  float m = lanes[0];
  for (int l = 1; l < 8; ++l) m = lanes[l] > m ? lanes[l] : m;
  bool any_nan = _mm256_movemask_ps(nan) != 0;
  for (; i < n; ++i) {
    m = s[i] > m ? s[i] : m;
    any_nan |= s[i] != s[i];
  }
  return any_nan ? __builtin_nanf("") : m;
}

void widen_f16_rows_avx2(const uint16_t* src, int64_t rs, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* in = src + r * rs;
    float* out = dst + r * cols;
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8)
      _mm256_storeu_ps(out + c, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + c))));
    for (; c < cols; ++c) out[c] = _cvtsh_ss(in[c]);
  }
}

}  // namespace bp::kernels::cpu::detail
