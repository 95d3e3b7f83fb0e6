#pragma once
// Portable building blocks every GEMM ISA file instantiates with its own
// flags: dtype conversions, packing (Note [GEMM packed panels] in
// gemm_kernel.h), the scalar write-back of a micro-tile, and a plain GEMV.
//
// Everything here is in an anonymous namespace on purpose: each ISA file gets
// its own copy compiled with its own flags. Were these ordinary inline
// templates, the linker would keep one instantiation for all files, and the
// generic path could end up running AVX-512 code on a CPU without it.
// No intrinsics here (the generic variant includes this file too).

#include <cstdint>
#include <cstring>

#include "kernels/cpu/gemm_kernel.h"

namespace bp::kernels::cpu::detail {
namespace {

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bf16_to_f32(uint16_t h) { return bits_to_float(static_cast<uint32_t>(h) << 16); }

// Round to nearest, ties to even (what vcvtneps2bf16 does); NaN stays a
// (quiet) NaN. Branch-free so that packing loops vectorise.
inline uint16_t f32_to_bf16(float f) {
  const uint32_t u = float_to_bits(f);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}

struct CvtSame {
  template <class T>
  T operator()(T x) const {
    return x;
  }
};
struct CvtBf16ToF32 {
  float operator()(uint16_t x) const { return bf16_to_f32(x); }
};
struct CvtF16ToF32Soft {
  float operator()(uint16_t x) const { return half_bits_to_float(x); }
};
struct CvtF32ToBf16 {
  uint16_t operator()(float x) const { return f32_to_bf16(x); }
};
// fp32 -> nearest bf16 -> fp32: the operand the "medium" path multiplies.
struct CvtRoundBf16 {
  float operator()(float x) const { return bf16_to_f32(f32_to_bf16(x)); }
};
struct CvtBf16Same {
  uint16_t operator()(uint16_t x) const { return x; }
};

inline int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Packs lines into W-wide strips, one value per (line, k) (k_unit 1).
template <int W, class Src, class Dst, class Cvt>
void pack_lines(const void* src_v, int64_t ls, int64_t ks, int64_t lines, int64_t k, void* dst_v) {
  const Src* src = static_cast<const Src*>(src_v);
  Dst* dst = static_cast<Dst*>(dst_v);
  const Cvt cvt{};
  for (int64_t l0 = 0; l0 < lines; l0 += W, dst += W * k) {
    const int64_t w = lines - l0 < W ? lines - l0 : W;
    const Src* s = src + l0 * ls;
    if (w == W && ls == 1) {  // lines adjacent: each k step is one contiguous run of W
      for (int64_t p = 0; p < k; ++p) {
        const Src* sp = s + p * ks;
        Dst* d = dst + p * W;
        for (int l = 0; l < W; ++l) d[l] = cvt(sp[l]);
      }
      continue;
    }
    if (ls == 1) {  // a ragged strip of adjacent lines: a run of w, then zeros
      // (not the line-by-line gather below: at n = 64 with NR = 48 that
      // scalar gather took a sixth of the whole multiply)
      for (int64_t p = 0; p < k; ++p) {
        const Src* sp = s + p * ks;
        Dst* d = dst + p * W;
        for (int64_t l = 0; l < w; ++l) d[l] = cvt(sp[l]);
        for (int64_t l = w; l < W; ++l) d[l] = Dst{};
      }
      continue;
    }
    if (w < W) {
      for (int64_t p = 0; p < k; ++p)
        for (int64_t l = w; l < W; ++l) dst[p * W + l] = Dst{};
    }
    // Line by line: reads along each line (contiguous when ks == 1).
    for (int64_t l = 0; l < w; ++l) {
      const Src* sl = s + l * ls;
      for (int64_t p = 0; p < k; ++p) dst[p * W + l] = cvt(sl[p * ks]);
    }
  }
}

// Packs lines into W-wide strips of bf16 pairs (k_unit 2): per k pair, the
// two values of each line side by side; an odd k gets a zero partner.
template <int W, class Src, class Cvt>
void pack_lines_pairs(const void* src_v, int64_t ls, int64_t ks, int64_t lines, int64_t k, void* dst_v) {
  const Src* src = static_cast<const Src*>(src_v);
  uint16_t* dst = static_cast<uint16_t*>(dst_v);
  const Cvt cvt{};
  const int64_t kp = (k + 1) / 2;
  for (int64_t l0 = 0; l0 < lines; l0 += W, dst += 2 * W * kp) {
    const int64_t w = lines - l0 < W ? lines - l0 : W;
    const Src* s = src + l0 * ls;
    if (w == W && ls == 1) {
      for (int64_t q = 0; q < k / 2; ++q) {
        const Src* s0 = s + 2 * q * ks;
        const Src* s1 = s0 + ks;
        uint16_t* d = dst + 2 * W * q;
        for (int l = 0; l < W; ++l) {
          d[2 * l] = cvt(s0[l]);
          d[2 * l + 1] = cvt(s1[l]);
        }
      }
      if (k % 2) {
        const Src* s0 = s + (k - 1) * ks;
        uint16_t* d = dst + 2 * W * (kp - 1);
        for (int l = 0; l < W; ++l) {
          d[2 * l] = cvt(s0[l]);
          d[2 * l + 1] = 0;
        }
      }
      continue;
    }
    if (ls == 1) {  // a ragged strip of adjacent lines (see pack_lines)
      for (int64_t q = 0; q < kp; ++q) {
        const Src* s0 = s + 2 * q * ks;
        const bool second = 2 * q + 1 < k;
        uint16_t* d = dst + 2 * W * q;
        for (int64_t l = 0; l < w; ++l) {
          d[2 * l] = cvt(s0[l]);
          d[2 * l + 1] = second ? cvt(s0[ks + l]) : uint16_t{0};
        }
        for (int64_t l = 2 * w; l < 2 * W; ++l) d[l] = 0;
      }
      continue;
    }
    if (w < W || k % 2) std::memset(dst, 0, sizeof(uint16_t) * 2 * W * kp);
    for (int64_t l = 0; l < w; ++l) {
      const Src* sl = s + l * ls;
      for (int64_t p = 0; p < k; ++p) dst[(p / 2 * W + l) * 2 + (p & 1)] = cvt(sl[p * ks]);
    }
  }
}

// C = alpha * tile + beta * C for an m x n corner of a row-major tile.
template <class Acc>
void store_tile(const Acc* tile, int ld, Acc* c, int64_t rs, int64_t cs, int m, int n, Acc alpha, Acc beta) {
  for (int i = 0; i < m; ++i) {
    Acc* ci = c + i * rs;
    const Acc* ti = tile + i * ld;
    if (beta == Acc(0)) {
      for (int j = 0; j < n; ++j) ci[j * cs] = alpha * ti[j];
    } else {
      for (int j = 0; j < n; ++j) ci[j * cs] = alpha * ti[j] + beta * ci[j * cs];
    }
  }
}

// y = alpha * x·B + beta * y without packing (see GemvFn). Vectorises along
// n when B's rows are contiguous (cs == 1), else runs dot products along k.
// `Op` is the value type the products are formed in (the source converted).
template <class Src, class Acc, class Cvt>
void gemv_plain(int64_t k, int64_t n, const void* x_v, int64_t xs, const void* b_v, int64_t rs, int64_t cs, Acc* y,
                int64_t ys, Acc alpha, Acc beta) {
  const Src* x = static_cast<const Src*>(x_v);
  const Src* b = static_cast<const Src*>(b_v);
  const Cvt cvt{};
  // Row-major B: read it strictly sequentially, four rows per pass over a
  // y chunk (32 KiB of partial sums: L1/L2), so B streams from memory once
  // and the partial sums are loaded and stored once per four rows.
  constexpr int64_t kChunk = 8192;
  if (cs == 1) {
    Acc acc[kChunk];
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      const int64_t nj = n - j0 < kChunk ? n - j0 : kChunk;
      for (int64_t j = 0; j < nj; ++j) acc[j] = Acc(0);
      int64_t p = 0;
      for (; p + 4 <= k; p += 4) {
        const Acc x0 = static_cast<Acc>(cvt(x[p * xs])), x1 = static_cast<Acc>(cvt(x[(p + 1) * xs]));
        const Acc x2 = static_cast<Acc>(cvt(x[(p + 2) * xs])), x3 = static_cast<Acc>(cvt(x[(p + 3) * xs]));
        const Src* b0 = b + p * rs + j0;
        const Src *b1 = b0 + rs, *b2 = b1 + rs, *b3 = b2 + rs;
        for (int64_t j = 0; j < nj; ++j) {
          acc[j] += x0 * static_cast<Acc>(cvt(b0[j])) + x1 * static_cast<Acc>(cvt(b1[j])) +
                    x2 * static_cast<Acc>(cvt(b2[j])) + x3 * static_cast<Acc>(cvt(b3[j]));
        }
      }
      for (; p < k; ++p) {
        const Acc xp = static_cast<Acc>(cvt(x[p * xs]));
        const Src* bp = b + p * rs + j0;
        for (int64_t j = 0; j < nj; ++j) acc[j] += xp * static_cast<Acc>(cvt(bp[j]));
      }
      for (int64_t j = 0; j < nj; ++j) {
        Acc* yj = y + (j0 + j) * ys;
        *yj = beta == Acc(0) ? alpha * acc[j] : alpha * acc[j] + beta * *yj;
      }
    }
    return;
  }
  int64_t j = 0;
  if (rs == 1 && xs == 1) {
    // Columns of B contiguous (x·Wᵀ, or W·x made the row case): eight dot
    // products at a time, so each x vector is loaded once for eight columns
    // and eight streams of B are in flight, with 16 partial sums per column
    // (one AVX-512 vector) so the loops vectorise without -ffast-math. fp32
    // W·x at 4096 x 4096, one thread, GB/s of W: four columns 24, eight 28
    // (AVX2 and AVX-512 alike; one column at a time with 8 sums ran bf16 at 7).
    constexpr int kCols = 8, kLanes = 16;
    for (; j + kCols <= n; j += kCols) {
      Acc s[kCols][kLanes] = {};
      const Src* bj = b + j * cs;
      int64_t p = 0;
      for (; p + kLanes <= k; p += kLanes) {
        Acc xv[kLanes];
        for (int u = 0; u < kLanes; ++u) xv[u] = static_cast<Acc>(cvt(x[p + u]));
        for (int c = 0; c < kCols; ++c)
          for (int u = 0; u < kLanes; ++u) s[c][u] += xv[u] * static_cast<Acc>(cvt(bj[c * cs + p + u]));
      }
      for (; p < k; ++p)
        for (int c = 0; c < kCols; ++c) s[c][p % kLanes] += static_cast<Acc>(cvt(x[p])) * static_cast<Acc>(cvt(bj[c * cs + p]));
      for (int c = 0; c < kCols; ++c) {
        for (int w = kLanes / 2; w > 0; w /= 2)
          for (int u = 0; u < w; ++u) s[c][u] += s[c][u + w];
        Acc* yj = y + (j + c) * ys;
        *yj = beta == Acc(0) ? alpha * s[c][0] : alpha * s[c][0] + beta * *yj;
      }
    }
  }
  for (; j < n; ++j) {
    const Src* bj = b + j * cs;
    Acc s[8] = {};  // eight partial sums so the loop vectorises without -ffast-math
    int64_t p = 0;
    if (rs == 1 && xs == 1) {
      for (; p + 8 <= k; p += 8)
        for (int u = 0; u < 8; ++u) s[u] += static_cast<Acc>(cvt(x[p + u])) * static_cast<Acc>(cvt(bj[p + u]));
    }
    for (; p < k; ++p) s[0] += static_cast<Acc>(cvt(x[p * xs])) * static_cast<Acc>(cvt(bj[p * rs]));
    const Acc dot = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    Acc* yj = y + j * ys;
    *yj = beta == Acc(0) ? alpha * dot : alpha * dot + beta * *yj;
  }
}

// FewRowsFn over an ISA's tile of R rows x C_ columns (Tile::run<R, C_>,
// Note [Few-row products] in gemm.cpp): the rows in one pass over B,
// columns four at a time, then one by one.
template <class T, class Tile>
void few_rows_by_tiles(int m, int64_t k, int64_t n, const void* a_v, int64_t a_rs, const void* b_v, int64_t b_cs,
                       float* c, int64_t c_rs, int64_t c_cs, float alpha, float beta) {
  const T* a = static_cast<const T*>(a_v);
  const T* b = static_cast<const T*>(b_v);
  auto rows = [&]<int R>(const T* ar, float* cr) {
    constexpr int kCols = 4;
    int64_t j = 0;
    for (; j + kCols <= n; j += kCols)
      Tile::template run<R, kCols>(k, ar, a_rs, b + j * b_cs, b_cs, cr + j * c_cs, c_rs, c_cs, alpha, beta);
    for (; j < n; ++j) Tile::template run<R, 1>(k, ar, a_rs, b + j * b_cs, b_cs, cr + j * c_cs, c_rs, c_cs, alpha, beta);
  };
  switch (m) {
    case 2: return rows.template operator()<2>(a, c);
    case 3: return rows.template operator()<3>(a, c);
    case 4: return rows.template operator()<4>(a, c);
    default:
      for (int r = 0; r < m; ++r) rows.template operator()<1>(a + r * a_rs, c + r * c_rs);
  }
}

}  // namespace
}  // namespace bp::kernels::cpu::detail
