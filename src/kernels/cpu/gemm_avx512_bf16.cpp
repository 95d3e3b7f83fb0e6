// GemmIsa::avx512_bf16: bf16 products with fp32 accumulation (vdpbf16ps).
// - fp32 inputs: the "medium" matmul precision. A and B are rounded to the
//   nearest bf16 while packing (so every product is of bf16-rounded
//   operands, whatever the path: the GEMV one rounds too), then the k dimension
//   is consumed in pairs: one vdpbf16ps does the work of two FMAs.
// - bf16 inputs: the native path, same kernel, packing only copies.
// - f16 inputs: no f16 dot product here, so they take the fp32 FMA kernel.

#include <immintrin.h>

#include "kernels/cpu/gcc12_avx512_warnings.h"

#include <algorithm>
#include <type_traits>

#include "kernels/cpu/gemm_pack.h"
#include "kernels/cpu/gemm_avx512_direct.h"
#include "kernels/cpu/gemm_avx512_tile.h"
#include "kernels/cpu/round16_avx512.h"

namespace bp::kernels::cpu::detail {
namespace {

// One k pair: C_i += a_i(2 bf16, broadcast as one 32-bit lane) . B(2 bf16 per
// lane), i.e. two multiply-adds per fp32 lane.
struct Bf16PairStep {
  using R = __m512;
  static constexpr int kUnit = 2;
  static constexpr int lane_bytes = 4;  // a bf16 pair
  static R load_b(const void* b, int v) { return _mm512_load_ps(static_cast<const float*>(b) + v * 16); }
  static R bcast(const char* p) { return broadcast_bf16_pair(p); }  // p: a pair of A, in place or packed
  static R step(R c, R a, R b) { return _mm512_dpbf16_ps(c, (__m512bh)a, (__m512bh)b); }
};

// 16 k steps of one row as 8 bf16 pairs: rounded from fp32, or as they are.
inline __m256 sixteen_as_pairs(const float* p) { return (__m256)_mm512_cvtneps_pbh(_mm512_loadu_ps(p)); }
inline __m256 sixteen_as_pairs(const uint16_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
inline uint16_t one_as_bf16(float x) { return f32_to_bf16(x); }
inline uint16_t one_as_bf16(uint16_t x) { return x; }

// Packs W-line bf16-pair strips (pack_lines_pairs<W>'s layout) from lines
// whose k steps are adjacent (ks == 1): a row-major A (W = 14), or a B whose
// columns are contiguous (W = 32: `x @ w.T`, every linear layer, w row-major).
// A pair is two adjacent k steps of one line, i.e. 32 adjacent bits of the
// source, so a strip is a transpose with 32-bit units: 16 k steps of 8 lines
// (8 pairs each, rounded from fp32 or as they are) go through one 8 x 8
// register transpose; a ragged strip's missing lines are zero vectors, and
// W = 14's second group stores 6 of its 8 lanes. The scalar gather of
// pack_lines_pairs (each value stored 4W bytes from the last) cost:
// - for A, "medium" under 1.8x fp32 once fp32 packing had its transpose;
// - for B, bf16 16 x 4096 x 4096 at 16.6 ms against 2.4 for oneDNN, and 49 x
//   512 x 2048 (ResNet-50's last 1x1 convolution, batch 1) 0.81 against 0.28.
template <int W, class Src>
void pack_pairs_adjacent_k(const Src* src, int64_t ls, int64_t lines, int64_t k, uint16_t* dst) {
  const int64_t kp = (k + 1) / 2, k16 = k / 16 * 16;
  const __m256 zero = _mm256_setzero_ps();
  for (int64_t l0 = 0; l0 < lines; l0 += W) {
    const int rows = static_cast<int>(std::min<int64_t>(W, lines - l0));
    const Src* s = src + l0 * ls;
    uint32_t* d = reinterpret_cast<uint32_t*>(dst + l0 * 2 * kp);  // strip l0 / W: 2 * W * kp values
    for (int64_t p = 0; p < k16; p += 16) {
      uint32_t* dq = d + p / 2 * W;
      for (int g = 0; g < W; g += 8) {
        __m256 r[8];
        for (int i = 0; i < 8; ++i) r[i] = g + i < rows ? sixteen_as_pairs(s + (g + i) * ls + p) : zero;
        transpose8x8(r);
        const __mmask8 keep = static_cast<__mmask8>(W - g >= 8 ? 0xff : (1u << (W - g)) - 1u);
        for (int q = 0; q < 8; ++q) _mm256_mask_storeu_ps(reinterpret_cast<float*>(dq + q * W + g), keep, r[q]);
      }
    }
    uint16_t* d16 = reinterpret_cast<uint16_t*>(d);
    for (int64_t p = k16; p < k; ++p)
      for (int l = 0; l < W; ++l) d16[(p / 2 * W + l) * 2 + (p & 1)] = l < rows ? one_as_bf16(s[l * ls + p]) : 0;
    if (k % 2)
      for (int l = 0; l < W; ++l) d16[((kp - 1) * W + l) * 2 + 1] = 0;
  }
}

// Packs B (fp32, medium path) into bf16-pair strips of 32 lines, the layout
// pack_lines_pairs<32> writes, with vector conversions on the common case
// (row-major B, full strips): one vcvtne2ps2bf16 rounds 16 values of row 2q
// and 16 of row 2q+1, one vpermw interleaves them into pairs. At small m
// (16 x 4096 x 4096) packing B is most of the work, and the scalar version
// made "medium" slower than fp32 there.
void pack_b_f32_pairs(const void* src_v, int64_t ls, int64_t ks, int64_t lines, int64_t k, void* dst_v) {
  constexpr int W = 32;
  const float* src = static_cast<const float*>(src_v);
  uint16_t* dst = static_cast<uint16_t*>(dst_v);
  if (ks == 1 && ls != 1) return pack_pairs_adjacent_k<W>(src, ls, lines, k, dst);
  const int64_t full = ls == 1 ? lines / W * W : 0;
  const int64_t kp = (k + 1) / 2;
  alignas(64) static constexpr uint16_t kInterleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,
                                                           21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26,
                                                           11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i idx = _mm512_load_si512(kInterleave);
  for (int64_t l0 = 0; l0 < full; l0 += W) {
    uint16_t* d = dst + l0 / W * (2 * W * kp);
    const float* s = src + l0;
    for (int64_t q = 0; q < kp; ++q, d += 2 * W) {
      const float* r0 = s + 2 * q * ks;
      const bool has_r1 = 2 * q + 1 < k;
      for (int h = 0; h < 2; ++h) {
        const __m512 lo = _mm512_loadu_ps(r0 + 16 * h);
        const __m512 hi = has_r1 ? _mm512_loadu_ps(r0 + ks + 16 * h) : _mm512_setzero_ps();
        const __m512i pairs = _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
        _mm512_store_si512(d + 32 * h, pairs);
      }
    }
  }
  if (full < lines) {
    pack_lines_pairs<W, float, CvtF32ToBf16>(src + full * ls, ls, ks, lines - full, k,
                                              dst + full / W * (2 * W * kp));
  }
}


// Packs bf16 B into bf16-pair strips of 32 lines (pack_lines_pairs<32>'s
// layout) for row-major B and full strips: one vpermt2w per 32 columns
// interleaves rows 2q and 2q+1. The scalar loop left the native bf16 path
// slower than the medium one (which converts as it packs) at n = 128.
void pack_b_bf16_pairs(const void* src_v, int64_t ls, int64_t ks, int64_t lines, int64_t k, void* dst_v) {
  constexpr int W = 32;
  const uint16_t* src = static_cast<const uint16_t*>(src_v);
  uint16_t* dst = static_cast<uint16_t*>(dst_v);
  if (ks == 1 && ls != 1) return pack_pairs_adjacent_k<W>(src, ls, lines, k, dst);
  const int64_t full = ls == 1 ? lines / W * W : 0;
  const int64_t kp = (k + 1) / 2;
  const __m512i lo = _mm512_setr_epi32(0x200000, 0x210001, 0x220002, 0x230003, 0x240004, 0x250005, 0x260006,
                                       0x270007, 0x280008, 0x290009, 0x2a000a, 0x2b000b, 0x2c000c, 0x2d000d,
                                       0x2e000e, 0x2f000f);  // word pairs (j, 32 + j), j = 0..15
  const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));  // j = 16..31
  for (int64_t l0 = 0; l0 < full; l0 += W) {
    uint16_t* d = dst + l0 / W * (2 * W * kp);
    const uint16_t* s = src + l0;
    for (int64_t q = 0; q < kp; ++q, d += 2 * W) {
      const __m512i r0 = _mm512_loadu_si512(s + 2 * q * ks);
      const __m512i r1 = 2 * q + 1 < k ? _mm512_loadu_si512(s + (2 * q + 1) * ks) : _mm512_setzero_si512();
      _mm512_storeu_si512(d, _mm512_permutex2var_epi16(r0, lo, r1));
      _mm512_storeu_si512(d + W, _mm512_permutex2var_epi16(r0, hi, r1));
    }
  }
  if (full < lines) {
    pack_lines_pairs<W, uint16_t, CvtBf16Same>(src + full * ls, ls, ks, lines - full, k, dst + full / W * (2 * W * kp));
  }
}

// Packs bf16 A whose rows are adjacent (ls == 1: a column-major A, the
// transposed values of bf16 flash:cpu, Note [Packed key and value panels])
// into 14-row pair strips: per k pair, the two k lines' 14 values (masked
// loads: a ragged strip's missing rows are 0) interleaved by one vpermt2w,
// 28 values stored at once. The scalar loop was 2% of causal bf16 flash:cpu
// at L = 4096, D = 64.
void pack_a_bf16_adjacent(const uint16_t* src, int64_t ks, int64_t lines, int64_t k, uint16_t* dst) {
  constexpr int W = 14;
  const int64_t kp = (k + 1) / 2;
  const __m512i idx = _mm512_setr_epi32(0x200000, 0x210001, 0x220002, 0x230003, 0x240004, 0x250005, 0x260006,
                                        0x270007, 0x280008, 0x290009, 0x2a000a, 0x2b000b, 0x2c000c, 0x2d000d,
                                        0x2e000e, 0x2f000f);  // word pairs (j, 32 + j), j = 0..15
  for (int64_t l0 = 0; l0 < lines; l0 += W) {
    const int64_t w = std::min<int64_t>(W, lines - l0);
    const __mmask16 lm = static_cast<__mmask16>((1u << w) - 1u);
    const uint16_t* s = src + l0;
    uint16_t* d = dst + l0 * 2 * kp;  // strip l0 / W: 2 * W * kp values
    for (int64_t q = 0; q < kp; ++q, d += 2 * W) {
      const __m512i r0 = _mm512_zextsi256_si512(_mm256_maskz_loadu_epi16(lm, s + 2 * q * ks));
      const __m512i r1 = 2 * q + 1 < k ? _mm512_zextsi256_si512(_mm256_maskz_loadu_epi16(lm, s + (2 * q + 1) * ks))
                                       : _mm512_setzero_si512();
      _mm512_mask_storeu_epi16(d, __mmask32{0x0FFFFFFF}, _mm512_permutex2var_epi16(r0, idx, r1));
    }
  }
}

// Packs A (fp32 for the medium path, or bf16) into 14-row bf16-pair strips,
// the layout pack_lines_pairs<14> writes: adjacent rows by
// pack_a_bf16_adjacent, row-major A by pack_pairs_adjacent_k (a ragged last
// strip too: m = 64 is 4 strips and 8 rows, and packed in the scalar loop
// that strip alone cost more than the other four at 64^3).
template <class Src, class Cvt>
void pack_a_pairs(const void* src_v, int64_t ls, int64_t ks, int64_t lines, int64_t k, void* dst_v) {
  constexpr int W = 14;
  const Src* src = static_cast<const Src*>(src_v);
  uint16_t* dst = static_cast<uint16_t*>(dst_v);
  if constexpr (std::is_same_v<Src, uint16_t> && std::is_same_v<Cvt, CvtBf16Same>) {
    if (ls == 1) return pack_a_bf16_adjacent(src, ks, lines, k, dst);
  }
  if (ks != 1 || ls == 1) {
    pack_lines_pairs<W, Src, Cvt>(src, ls, ks, lines, k, dst);
    return;
  }
  pack_pairs_adjacent_k<W>(src, ls, lines, k, dst);
}

struct CvtF16ToF32Hw {
  float operator()(uint16_t x) const { return _cvtsh_ss(x); }
};

// Native bf16 for FewRowsTile (gemm_avx512_tile.h), and so for the GEMV
// below: the pairs straight from memory into vdpbf16ps, 32 k steps per
// instruction, as the bf16 GEMM's tiles multiply (exact products, fp32 sums).
struct FewRowsBf16Dot {
  using T = uint16_t;
  static constexpr int64_t kK = 32;
  static __m512 load(const uint16_t* p) { return _mm512_castsi512_ps(_mm512_loadu_si512(p)); }
  static __m512 load_tail(int64_t left, const uint16_t* p) {
    return _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(static_cast<__mmask32>((uint64_t{1} << left) - 1), p));
  }
  static __m512 dot(__m512 acc, __m512 a, __m512 b) { return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b); }
};

// y = alpha·x·B + beta·y for native bf16 (GemvFn): where x and B's columns
// are contiguous along k (x·Wᵀ, or W·x turned into the row case), one-row
// FewRowsTile products, kGemvPairCols columns per x load; other layouts take
// gemv_plain. Widening each value first held W·x (4096 x 4096) to 18 GB/s
// of W on one thread.
constexpr int kGemvPairCols = 8;  // columns per x load: 4 gave 38 GB/s of W·x at 4096^2 on one thread, 8 46, 12 44, 16 29
void gemv_bf16_pairs(int64_t k, int64_t n, const void* x_v, int64_t xs, const void* b_v, int64_t rs, int64_t cs,
                     float* y, int64_t ys, float alpha, float beta) {
  if (rs != 1 || xs != 1) return gemv_plain<uint16_t, float, CvtBf16ToF32>(k, n, x_v, xs, b_v, rs, cs, y, ys, alpha, beta);
  using Tile = FewRowsTile<FewRowsBf16Dot>;
  const uint16_t* x = static_cast<const uint16_t*>(x_v);
  const uint16_t* b = static_cast<const uint16_t*>(b_v);
  int64_t j = 0;
  for (; j + kGemvPairCols <= n; j += kGemvPairCols)
    Tile::run<1, kGemvPairCols>(k, x, 0, b + j * cs, cs, y + j * ys, 0, ys, alpha, beta);
  for (; j < n; ++j) Tile::run<1, 1>(k, x, 0, b + j * cs, cs, y + j * ys, 0, ys, alpha, beta);
}

// Blocking: MC = 336 and NC = 4096 as gemm_avx512.cpp's (see there); KC =
// 1024 k steps (512 pairs): a B strip is 64 KiB, streamed from L2 with the
// micro-kernel's prefetches as the fp32 kernel's 72 KiB strip is, and the A
// block 672 KiB of the 1 MiB L2. Against KC = 512, one thread on Zen 5, it
// halves the C write-backs and tile start-ups: 1024^3 476 -> 492 GFLOP/s
// (0.97x -> 1.00x PyTorch in the same run), 2048^3 470 -> 474.
constexpr int kMR = 14, kNR = 32;
// Out16: the rounding epilogue of a 16-bit product (bf16 inputs only; the
// medium path's output is fp32).
// RowsA: the tiles reading A in place (native bf16 only: the medium path
// must round A, which packing does).
template <class Src, class Cvt, GemvFn<float> Gemv, PackFn PackB, DirectKernelFn<float> Direct, MicroOut16Fn Out16,
          DirectOut16Fn DirectOut16, RowsAKernelFn<float> RowsA, FewRowsFn<float> FewRows = nullptr>
constexpr GemmKernel<float> bf16_kernel{kMR, kNR, 2, 2, 336, 1024, 4096,
                                        &pack_a_pairs<Src, Cvt>, PackB,
                                        &micro_tile<float, kMR, kNR / 16, Bf16PairStep>, Gemv,
                                        Direct, Out16, DirectOut16, RowsA, FewRows};
constexpr GemmKernel<float> f16_kernel{kMR, kNR, 1, 4, 336, 256, 4096,
                                       &pack_lines<kMR, uint16_t, float, CvtF16ToF32Hw>,
                                       &pack_lines<kNR, uint16_t, float, CvtF16ToF32Hw>,
                                       &micro_tile<float, kMR, kNR / 16, FmaStep<float>>,
                                       &gemv_plain<uint16_t, float, CvtF16ToF32Hw>,
                                       nullptr,
                                       &micro_tile_out16<kMR, kNR / 16, FmaStep<float>, RoundToF16>};

}  // namespace

const GemmKernel<float>* gemm_kernel_f32_avx512_bf16(DType src) {
  switch (src) {
    // The medium path has no direct kernel: its B must be rounded to bf16,
    // which packing does once per element.
    case DType::f32:
      return &bf16_kernel<float, CvtF32ToBf16, &gemv_plain<float, float, CvtRoundBf16>, &pack_b_f32_pairs, nullptr, nullptr, nullptr, nullptr>;
    case DType::bf16:
      return &bf16_kernel<uint16_t, CvtBf16Same, &gemv_bf16_pairs, &pack_b_bf16_pairs,
                          &direct_tile<float, kMR, kNR / 16, Bf16PairDirect>,
                          &micro_tile_out16<kMR, kNR / 16, Bf16PairStep, RoundToBf16>,
                          &direct_tile_out16<kMR, kNR / 16, Bf16PairDirect, RoundToBf16>,
                          &rows_a_tile<float, kMR, kNR / 16, Bf16PairStep, Bf16PairDirect, RoundToBf16>,
                          &few_rows_by_tiles<uint16_t, FewRowsTile<FewRowsBf16Dot>>>;
    case DType::f16: return &f16_kernel;
    default: return nullptr;  // f64 has its own kernel; the other types none
  }
  return nullptr;
}

}  // namespace bp::kernels::cpu::detail
