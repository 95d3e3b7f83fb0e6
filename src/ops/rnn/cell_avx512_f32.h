#pragma once
// The fp32 AVX-512 vector traits of packed:cpu's step kernels, shared by the
// fp32 kernels (cell_avx512.cpp) and the bf16 ones (cell_avx512_bf16.cpp),
// which keep fp32 state and accumulators. Include only from files compiled
// with AVX-512 enabled (the _avx512*.cpp rules of CMakeLists.txt).

#include <immintrin.h>

#include <cstdint>

namespace bp::ops::rnn::cell::avx512 {
// Unnamed on purpose: each including file gets its own type, so the kernels
// instantiated on it (compiled with different ISA flags) never merge at link.
namespace {

struct F32 {
  using T = float;
  static constexpr int V = 16;
  typedef float vec __attribute__((vector_size(64)));
  typedef int32_t ivec __attribute__((vector_size(64)));
  static vec fma(vec a, vec b, vec c) { return (vec)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c); }
  static vec splat(T x) { return (vec)_mm512_set1_ps(x); }
  // p * 2^n (n integral): exact, and no exponent-bit arithmetic.
  static vec scale2(vec p, vec n) { return (vec)_mm512_scalef_ps((__m512)p, (__m512)n); }
  // 1 / d for d in [1, FLT_MAX]: the 14-bit estimate and one Newton step (about 1 ulp).
  static vec recip(vec d) {
    const __m512 r = _mm512_rcp14_ps((__m512)d);
    return (vec)_mm512_fmadd_ps(r, _mm512_fnmadd_ps((__m512)d, r, _mm512_set1_ps(1.0f)), r);
  }
  static constexpr int rows4 = 6, rows3 = 8, rows1 = 8;  // rows per step tile: 32 registers
};

}  // namespace
}  // namespace bp::ops::rnn::cell::avx512
