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

// Round to nearest even; NaN stays NaN (a plain rounding add could carry a signalling NaN into infinity).
uint16_t to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

template <int G, int R>
void block(const StepArgs<float>& s, int64_t b0, int64_t u) {
  const int64_t K2 = (s.K + 1) / 2;
  vec acc[R][G];
  for (int r = 0; r < R; ++r)
    for (int g = 0; g < G; ++g) acc[r][g] = F32::splat(0.0f);
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

void pack_bf16(const float* w, int gates, int64_t units, int64_t K, uint16_t* panel) {
  const int64_t blocks = (units + V - 1) / V, K2 = (K + 1) / 2;
  for (int64_t u = 0; u < blocks; ++u)
    for (int64_t k2 = 0; k2 < K2; ++k2)
      for (int g = 0; g < gates; ++g)
        for (int v = 0; v < V; ++v)
          for (int j = 0; j < 2; ++j) {
            const int64_t unit = u * V + v, k = 2 * k2 + j;
            panel[(((u * K2 + k2) * gates + g) * V + v) * 2 + j] =
                unit < units && k < K ? to_bf16(w[(g * units + unit) * K + k]) : uint16_t{0};
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
