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
  // The k range of a panel slice shared by the row blocks: 128 KiB (an LSTM's whole 16-unit panel up to
  // K = 512), so a row block runs all of it in one pass from L2 rather than a slice at a time from L1 with
  // its partial sums stored in between. 32 KiB had cut the step's time by 7% against 16 KiB on Zen 5 (48
  // KiB L1); re-measured once the GEMM's direct kernel had lost its software prefetches (interleaved,
  // packed:cpu GFLOP/s, 128 / 32 KiB): LSTM 256 -> 512 x 2 batch 32 one thread 200-204 / 190-195, two
  // threads 385 / 376; batch 8 189 / 169; GRU 203-206 / 191-200; LSTM 1024 -> 1024 batch 32 185 / 171-187;
  // 64 and 256 KiB fell between or below.
  static constexpr int64_t slice_bytes = 128 << 10;
  // r[i] becomes column i of the 16 x 16 tile whose rows were r[0..15] (the packing of the recurrent
  // panels: rows of W are units, the panel's vectors are 16 units at one k).
  static void transpose16(vec (&r)[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_ps((__m512)r[2 * i], (__m512)r[2 * i + 1]);      // per lane: a0 b0 a1 b1
      t[2 * i + 1] = _mm512_unpackhi_ps((__m512)r[2 * i], (__m512)r[2 * i + 1]);  //           a2 b2 a3 b3
    }
    for (int i = 0; i < 4; ++i) {  // rows 4i .. 4i+3; u[4i + j] holds, in lane L, column 4L + j of them
      u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
      u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
      u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
      u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int j = 0; j < 4; ++j) {  // column 4L + j: lane L of u[j], u[4 + j], u[8 + j], u[12 + j]
      const __m512 v0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88), v1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
      const __m512 v2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
      const __m512 v3 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
      r[j] = (vec)_mm512_shuffle_f32x4(v0, v2, 0x88);
      r[8 + j] = (vec)_mm512_shuffle_f32x4(v0, v2, 0xDD);
      r[4 + j] = (vec)_mm512_shuffle_f32x4(v1, v3, 0x88);
      r[12 + j] = (vec)_mm512_shuffle_f32x4(v1, v3, 0xDD);
    }
  }
};

}  // namespace
}  // namespace bp::ops::rnn::cell::avx512
