// packed:avx512_bf16's step: the recurrent products as AVX512_BF16 dot
// products (vdpbf16ps: two bf16 products per fp32 lane, accumulated in
// fp32) on W_hh packed into panels of bf16 pairs along k, h_prev rounded to
// bf16 pairs each step; the state and the cell stay fp32 (the epilogue is
// cell_kernel.h's). What mkldnn.rnn.fp32_precision = "bf16" (or "medium")
// permits. Compiled with -mavx512bf16 by the _avx512_bf16.cpp rule of
// CMakeLists.txt; called only when bf16_supported().

#include <immintrin.h>

#include "kernels/cpu/gemm.h"
#include "ops/rnn/cell_avx512_f32.h"
#include "ops/rnn/cell_kernel.h"

namespace bp::ops::rnn::cell {
namespace {

using avx512::F32;
using K32 = Kernel<F32>;
using vec = F32::vec;
constexpr int V = F32::V;

template <int G, int R>
void block(const StepArgs<float>& s, int64_t b0, int64_t u) {
  const int64_t K2 = (s.K + 1) / 2;
  vec acc[R][G];
  K32::start<G, R>(s, b0, u, acc);  // the input projections first (Note [Input projection first])
  const uint16_t* panel = s.panel_bf16 + u * K2 * G * V * 2;
  const uint32_t* a = s.a_bf16 + b0 * K2;
  for (int64_t k2 = 0; k2 < K2; ++k2) {
    __m512bh w[G];
    for (int g = 0; g < G; ++g) w[g] = (__m512bh)_mm512_loadu_si512(panel + (k2 * G + g) * V * 2);
    for (int r = 0; r < R; ++r) {
      const __m512bh x = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r * K2 + k2]));
      for (int g = 0; g < G; ++g) acc[r][g] = (vec)_mm512_dpbf16_ps((__m512)acc[r][g], x, w[g]);
    }
  }
  K32::finish<G, R>(s, b0, u, acc);
}

template <int G, int R>
void rows_of(const StepArgs<float>& s, int64_t u) {
  const int64_t blocks = (s.rows + R - 1) / R;
  const int64_t base = s.rows / blocks, extra = s.rows % blocks;
  int64_t b = 0;
  for (int64_t i = 0; i < blocks; ++i) {
    K32::prefetch_epilogue(s, u, i, blocks);
    const int64_t r = base + (i < extra ? 1 : 0);
    switch (r) {
      case 1: block<G, 1>(s, b, u); break;
      case 2: block<G, 2>(s, b, u); break;
      case 3: block<G, 3>(s, b, u); break;
      case 4: block<G, 4>(s, b, u); break;
      case 5: block<G, 5>(s, b, u); break;
      case 6: if constexpr (R >= 6) block<G, 6>(s, b, u); break;
      case 7: if constexpr (R >= 7) block<G, 7>(s, b, u); break;
      default: if constexpr (R >= 8) block<G, 8>(s, b, u); break;
    }
    b += r;
  }
}

}  // namespace

bool bf16_supported() { return kernels::cpu::gemm_isa_supported(kernels::cpu::GemmIsa::avx512_bf16); }

// 16 x 16 tiles of w transposed in registers (F32::transpose16), each pair of columns (k, k + 1) then
// rounded to bf16 by one vcvtne2ps2bf16 (to nearest even, NaN kept NaN; it flushes denormals) and
// interleaved unit by unit into the pair layout: the element loop this replaced cost 2% of a batch-32 call.
void pack_bf16(const float* w, int gates, int64_t units, int64_t K, uint16_t* panel) {
  const int64_t blocks = (units + V - 1) / V, K2 = (K + 1) / 2;
  alignas(64) uint16_t order[32];
  for (int v = 0; v < 16; ++v) {
    order[2 * v] = static_cast<uint16_t>(v);            // unit v's k (the low half: column 2j)
    order[2 * v + 1] = static_cast<uint16_t>(16 + v);   // and its k + 1 (the high half: column 2j + 1)
  }
  const __m512i interleave = _mm512_load_si512(order);
  for (int64_t u = 0; u < blocks; ++u)
    for (int g = 0; g < gates; ++g)
      for (int64_t k0 = 0; k0 < K; k0 += V) {
        const int nk = static_cast<int>(K - k0 < V ? K - k0 : V);
        const __mmask16 m = static_cast<__mmask16>((1u << nk) - 1);
        vec r[V];
        for (int v = 0; v < V; ++v) {
          const int64_t j = u * V + v;
          r[v] = j < units ? (vec)_mm512_maskz_loadu_ps(m, w + (g * units + j) * K + k0) : F32::splat(0.0f);
        }
        F32::transpose16(r);  // r[i]: column k0 + i (zero past K)
        for (int j = 0; 2 * j < nk; ++j) {
          const __m512i both = (__m512i)_mm512_cvtne2ps_pbh((__m512)r[2 * j + 1], (__m512)r[2 * j]);
          const int64_t k2 = k0 / 2 + j;
          _mm512_storeu_si512(panel + ((u * K2 + k2) * gates + g) * V * 2, _mm512_permutexvar_epi16(interleave, both));
        }
      }
}

// h_prev's rows as bf16 (the pairs are the bf16 values in order, a zero after an odd K), with the
// hardware's round-to-nearest-even conversion, 16 values an instruction: this runs every step, on every
// thread, so a scalar loop here cost as much as a fifth of a batch-32 step's products.
void pairs_bf16(const float* h, int64_t rows, int64_t K, uint32_t* pairs) {
  const int64_t K2 = (K + 1) / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = h + r * K;
    auto* dst = reinterpret_cast<uint16_t*>(pairs + r * K2);
    int64_t k = 0;
    for (; k + 16 <= K; k += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + k), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + k)));
    if (k < K) {
      const __mmask16 m = static_cast<__mmask16>((1u << (K - k)) - 1);
      _mm256_mask_storeu_epi16(dst + k, m, (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, src + k)));
    }
    if (K % 2 != 0) dst[K] = 0;
  }
}

void step_bf16(const StepArgs<float>& s) {
  for (int64_t u = s.u0; u < s.u1; ++u) {
    switch (s.gates) {
      case 4: rows_of<4, F32::rows4>(s, u); break;
      case 3: rows_of<3, F32::rows3>(s, u); break;
      default: rows_of<1, F32::rows1>(s, u); break;
    }
  }
}

}  // namespace bp::ops::rnn::cell
