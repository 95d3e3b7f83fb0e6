// sparse24_bf16_avx512: the bf16 2:4 kernel (sparse24.h), in the
// orientation of C itself: a vector holds 16 rows of W (16 outputs of one row
// of X), and the metadata selects X's columns with an in-register permutation
// instead of an address.
//
// Why not panels of X's rows with W broadcast, as the f32 kernel: that
// layout (tried until this change) packed X with all 6 column pairs of each
// group of 4 and read, per vdpbf16ps, the 64-byte pair row the metadata
// names, so every instruction was a load from a working set of tens of KiB;
// measured here (Zen 5, 2 cores shared by several jobs) a stream of
// vdpbf16ps with such loads ran at a third of the register-operand rate once
// the set passed ~10 KiB, and the kernel reached only 0.7-1.2x the dense bf16
// GEMM. Here one 64-byte load of a row of X (32 columns: 8 groups) serves 8
// groups x 64 rows of W, and a group costs one vpermw (the pair of columns
// each W row keeps, from its 4-bit code) and one vdpbf16ps per row of X and
// 16 rows of W, every operand in a register: 1.35-2.1x the dense bf16 GEMM
// at 4096 x 4096 x 256 .. 1024 (bench/sparse_vs_dense.py).
//
// W is transposed per call into 16-row blocks, per group: the 16 rows' value
// pairs (one 32-bit lane each) and their vpermw index words (from the
// codes), gathered block by block by the thread that uses the block (it stays
// in that thread's L2 while every row of X passes over it).

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/round16_avx512.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/sparse24.h"
#include "kernels/cpu/sparse24_blocking.h"

namespace bp::kernels::cpu {
namespace {

constexpr int kVn = 4;  // W vectors (16 rows each) per register tile
constexpr int kRm = 4;  // rows of X per register tile (16 accumulators; 4 X, 4 value and 4 index registers)
constexpr int64_t kChunk = 8;  // groups per 64-byte load of a row of X (32 bf16 columns)

inline int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// fp32 -> bf16 bits, round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Xb[mp][kc] (bf16 bits): X's rows, zero past m and k (kc: whole chunks).
void pack_x(const Sparse24Input& x, bool x_f32, int64_t k, int64_t mp, int64_t kc, uint16_t* xb) {
  const int team = threads::team_size(mp * kc / 65536);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t r = 0; r < mp; ++r) {
    uint16_t* dst = xb + r * kc;
    int64_t c = 0;
    if (r < x.m) {
      if (x_f32) {
        const float* src = static_cast<const float*>(x.data) + r * x.rs;
        if (x.cs == 1)
          for (; c + 16 <= k; c += 16)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c), detail::RoundToBf16::round(_mm512_loadu_ps(src + c)));
        for (; c < k; ++c) {
          const __m512 v = _mm512_set1_ps(src[c * x.cs]);
          dst[c] = static_cast<uint16_t>(_mm256_extract_epi16(detail::RoundToBf16::round(v), 0));
        }
      } else {
        const uint16_t* src = static_cast<const uint16_t*>(x.data) + r * x.rs;
        if (x.cs == 1) {
          std::memcpy(dst, src, static_cast<std::size_t>(k) * sizeof(uint16_t));
          c = k;
        }
        for (; c < k; ++c) dst[c] = src[c * x.cs];
      }
    }
    std::fill(dst + c, dst + kc, uint16_t{0});
  }
}

// 16 x 16 transpose of 32-bit elements: r[i] = row i in, r[j] = column j out.
inline void transpose16(__m512i (&r)[16]) {
  __m512i t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  // u[4 i + c]: in each 128-bit lane L, column 4 L + c of rows 4 i .. 4 i + 3.
  for (int c = 0; c < 4; ++c) {
    const __m512i a0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x88), a1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xDD);
    const __m512i b0 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x88);
    const __m512i b1 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_i32x4(a0, b0, 0x88);
    r[8 + c] = _mm512_shuffle_i32x4(a0, b0, 0xDD);
    r[4 + c] = _mm512_shuffle_i32x4(a1, b1, 0x88);
    r[12 + c] = _mm512_shuffle_i32x4(a1, b1, 0xDD);
  }
}

// Block b of W (rows 16 b .. 16 b + 15, zero past n) for groups [0, gp):
// wp[gi][0..15] the value pairs (first in the low half), wp[gi][16..31] the
// vpermw index words (lane j: the columns, within its chunk of 32, of the
// pair row j keeps). values: bf16 bits, values_rs elements between rows.
// The pairs of 16 groups are 16 rows' 64-byte loads, transposed in registers
// (per-group gathers took about twice as long: at 16 rows of X the packing
// is most of the call).
void pack_w_block(const uint16_t* values, int64_t values_rs, const uint8_t* meta, int64_t meta_rs, int64_t n,
                  int64_t g, int64_t gp, int64_t b, uint32_t* wp) {
  const int64_t j0 = 16 * b, rows = std::min<int64_t>(16, n - j0);
  const __mmask16 valid = static_cast<__mmask16>(rows >= 16 ? 0xFFFFu : (1u << rows) - 1u);
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i moff = _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int>(meta_rs)));
  const uint16_t* vbase = values + j0 * values_rs;
  const uint8_t* mbase = meta + j0 * meta_rs;
  const int64_t meta_bytes = g / 2;  // a row's meta (g is even)
  const __m512i three = _mm512_set1_epi32(3), fifteen = _mm512_set1_epi32(15);
  for (int64_t q16 = 0; 16 * q16 < gp; ++q16) {
    __m512i pairs[16];
    const int64_t in_row = std::clamp<int64_t>(g - 16 * q16, 0, 16);  // groups of this chunk W's rows hold
    const __mmask16 cols = static_cast<__mmask16>(in_row >= 16 ? 0xFFFFu : (1u << in_row) - 1u);
    for (int j = 0; j < 16; ++j)
      pairs[j] = j < rows ? _mm512_maskz_loadu_epi32(cols, vbase + j * values_rs + 32 * q16) : _mm512_setzero_si512();
    transpose16(pairs);
    for (int half = 0; half < 2; ++half) {
      const int64_t q = 2 * q16 + half;  // chunk of 8 groups
      if (kChunk * q >= gp) break;
      // The 8 codes of chunk q of each of the 16 rows: meta bytes 4q .. 4q + 3.
      __m512i codes;
      if (4 * q + 4 <= meta_bytes) {
        codes = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), valid,
                                            _mm512_add_epi32(moff, _mm512_set1_epi32(static_cast<int>(4 * q))), mbase, 1);
      } else {  // the row's last bytes: never read past them (the last row's end)
        alignas(64) uint32_t words[16] = {};
        for (int j = 0; j < rows; ++j)
          for (int64_t i = 4 * q; i < meta_bytes; ++i) words[j] |= uint32_t{mbase[j * meta_rs + i]} << (8 * (i - 4 * q));
        codes = _mm512_load_si512(words);
      }
#pragma GCC unroll 8
      for (int h = 0; h < kChunk; ++h) {
        uint32_t* out = wp + (kChunk * q + h) * 32;
        const __m512i code = _mm512_and_si512(_mm512_srli_epi32(codes, 4 * h), fifteen);
        // low word: 4 h + first column, high word: 4 h + second column.
        const __m512i idx = _mm512_add_epi32(
            _mm512_add_epi32(_mm512_and_si512(code, three), _mm512_slli_epi32(_mm512_srli_epi32(code, 2), 16)),
            _mm512_set1_epi32(4 * h * 0x10001));
        _mm512_store_si512(out, pairs[kChunk * half + h]);
        _mm512_store_si512(out + 16, idx);
      }
    }
  }
}

// C rows r0 .. r0 + kRm - 1 (those < m), columns of W blocks b0 .. b0 + kVn - 1
// (those < n), over all gp groups.
inline void tile(const uint32_t* const* wp, int64_t gp, const uint16_t* xb, int64_t kc, int64_t r0, int64_t m,
                 int64_t j0, int64_t n, float* c, int64_t crs, int64_t ccs) {
  __m512 acc[kRm][kVn];
#pragma GCC unroll 8
  for (int r = 0; r < kRm; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kVn; ++v) acc[r][v] = _mm512_setzero_ps();
  const uint16_t* xr0 = xb + r0 * kc;
  for (int64_t q = 0; q < gp / kChunk; ++q) {
    __m512i xr[kRm];
#pragma GCC unroll 8
    for (int r = 0; r < kRm; ++r) xr[r] = _mm512_loadu_si512(xr0 + r * kc + 32 * q);
#pragma GCC unroll 8
    for (int h = 0; h < kChunk; ++h) {
      const int64_t at = (kChunk * q + h) * 32;
      __m512i w[kVn], idx[kVn];
#pragma GCC unroll 4
      for (int v = 0; v < kVn; ++v) {
        w[v] = _mm512_load_si512(wp[v] + at);
        idx[v] = _mm512_load_si512(wp[v] + at + 16);
      }
#pragma GCC unroll 8
      for (int r = 0; r < kRm; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < kVn; ++v)
          acc[r][v] = _mm512_dpbf16_ps(acc[r][v], (__m512bh)w[v], (__m512bh)_mm512_permutexvar_epi16(idx[v], xr[r]));
    }
  }
  for (int r = 0; r < kRm && r0 + r < m; ++r)
    for (int v = 0; v < kVn; ++v) {
      const int64_t j = j0 + 16 * v;
      if (j >= n) break;
      const __mmask16 keep = static_cast<__mmask16>(n - j >= 16 ? 0xFFFFu : (1u << (n - j)) - 1u);
      float* out = c + (r0 + r) * crs + j * ccs;
      if (ccs == 1) {
        _mm512_mask_storeu_ps(out, keep, acc[r][v]);
      } else {
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, acc[r][v]);
        for (int l = 0; l < 16 && j + l < n; ++l) out[l * ccs] = lanes[l];
      }
    }
}

}  // namespace

void sparse24_bf16_avx512(const Sparse24& w, bool values_f32, const Sparse24Input& x, bool x_f32, float* c,
                          int64_t crs, int64_t ccs) {
  const int64_t g = groups_of(w.k), gp = round_up(g, kChunk), kc = 4 * gp;
  // f32 values ("medium" precision) are rounded once per call, row by row.
  const uint16_t* values = static_cast<const uint16_t*>(w.values);
  int64_t values_rs = w.values_rs;
  if (values_f32) {
    uint16_t* dst = reinterpret_cast<uint16_t*>(scratch(ScratchSlot::sparse24_values, static_cast<std::size_t>(w.n * g)));
    const float* src = static_cast<const float*>(w.values);
    const int team = threads::team_size(w.n * g / 16384);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
    for (int64_t j = 0; j < w.n; ++j) {
      int64_t i = 0;
      for (; i + 16 <= 2 * g; i += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j * 2 * g + i),
                            detail::RoundToBf16::round(_mm512_loadu_ps(src + j * w.values_rs + i)));
      for (; i < 2 * g; ++i) dst[j * 2 * g + i] = to_bf16(src[j * w.values_rs + i]);
    }
    values = dst;
    values_rs = 2 * g;
  }
  const int64_t mp = round_up(x.m, kRm);
  uint16_t* xb = reinterpret_cast<uint16_t*>(scratch(ScratchSlot::sparse24_x, static_cast<std::size_t>(mp * kc / 2)));
  pack_x(x, x_f32, w.k, mp, kc, xb);
  const int64_t blocks = (w.n + 16 * kVn - 1) / (16 * kVn), per_block = gp * 32;  // uint32 per 16 rows
  const int team = threads::team_size(blocks);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t t = 0; t < blocks; ++t) {
    // This thread's transposed W block (Note [Kernel scratch]: kept per thread).
    uint32_t* wp = reinterpret_cast<uint32_t*>(scratch(ScratchSlot::sparse24_w, static_cast<std::size_t>(kVn * per_block)));
    const uint32_t* wv[kVn];
    for (int v = 0; v < kVn; ++v) {
      const int64_t b = kVn * t + v;
      if (16 * b < w.n) pack_w_block(values, values_rs, w.meta, w.meta_rs, w.n, g, gp, b, wp + v * per_block);
      else std::fill(wp + v * per_block, wp + (v + 1) * per_block, 0u);  // zero values, index words 0
      wv[v] = wp + v * per_block;
    }
    for (int64_t r0 = 0; r0 < x.m; r0 += kRm) tile(wv, gp, xb, kc, r0, x.m, 16 * kVn * t, w.n, c, crs, ccs);
  }
}

}  // namespace bp::kernels::cpu
