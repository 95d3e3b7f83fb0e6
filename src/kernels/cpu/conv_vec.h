#pragma once
// The vector types the convolution kernels are written over
// (conv_direct_impl.h, conv_winograd_impl.h): R with L fp32 lanes, zero(),
// unaligned load(p) / store(p, v), set1(x), fma(a, b, c) = a * b + c, and
// +, -, * on R; kIsa names the variant. Each ISA's files are compiled with that ISA's flags, so each
// type exists only where its instructions may be used.

#include <cstring>

#include "kernels/cpu/conv_direct.h"

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace bp::kernels::cpu::detail {

#ifdef __AVX512F__
struct Zmm {  // 16 lanes (AVX-512F)
  using R = __m512;
  static constexpr int L = 16;
  static constexpr ConvIsa kIsa = ConvIsa::avx512;
  static R zero() { return _mm512_setzero_ps(); }
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  static R set1(float x) { return _mm512_set1_ps(x); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
};
#endif

#ifdef __AVX2__
struct Ymm {  // 8 lanes (AVX2 + FMA)
  using R = __m256;
  static constexpr int L = 8;
  static constexpr ConvIsa kIsa = ConvIsa::avx2;
  static R zero() { return _mm256_setzero_ps(); }
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, R v) { _mm256_storeu_ps(p, v); }
  static R set1(float x) { return _mm256_set1_ps(x); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
};
#endif

// 4 lanes as plain floats, which the compiler maps to the baseline's SSE
// registers (a separate multiply and add: the baseline has no FMA).
struct Quad {
  struct R {
    float v[4];
    friend R operator+(R a, R b) {
      for (int i = 0; i < 4; ++i) a.v[i] += b.v[i];
      return a;
    }
    friend R operator-(R a, R b) {
      for (int i = 0; i < 4; ++i) a.v[i] -= b.v[i];
      return a;
    }
    friend R operator*(R a, R b) {
      for (int i = 0; i < 4; ++i) a.v[i] *= b.v[i];
      return a;
    }
  };
  static constexpr int L = 4;
  static constexpr ConvIsa kIsa = ConvIsa::generic;
  static R zero() { return R{}; }
  static R load(const float* p) {
    R r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
  }
  static void store(float* p, R v) { std::memcpy(p, v.v, sizeof v.v); }
  static R set1(float x) { return R{{x, x, x, x}}; }
  static R fma(R a, R b, R c) { return a * b + c; }
};

}  // namespace bp::kernels::cpu::detail
