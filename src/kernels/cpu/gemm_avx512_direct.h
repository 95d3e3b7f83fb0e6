#pragma once
// The AVX-512 "direct B" micro-kernel (DirectKernelFn in gemm_kernel.h): the
// register tile of gemm_avx512_tile.h with A packed as usual but B read in
// place from a row-major source, no packed B strip. For small m every packed
// B element would be used by only ceil(m / MR) tiles, so writing B out and
// reading it back (16 x 4096 x 4096: as long as the whole multiply) is the
// larger part of the work; reading the source rows directly costs one
// strided pass instead.
//
// Note [Direct B without software prefetch]
// The B rows are left to the hardware prefetchers, which follow the strided
// rows of a strip (and the next strip's lines) on their own. Two software
// prefetches per line (16 rows ahead, and the next strip's line) cost more
// than they saved once Zen 5 was measured interleaved, one process per
// variant, same inputs: fp32 one thread, GFLOP/s without / with: 256^3 219
// / 210, 128^3 216 / 203, 384^3 226 / 220, 64 x 1024 x 1024 215 / 166,
// 32 x 512 x 2048 210 / 159, 128 x 4096 x 4096 189 / 155 (the row 16 ahead
// was the costly one: alone it lost as much, the next-strip one alone
// little), 16 x 4096 x 4096 92 / 89; two threads 256^3 400 / 374; bf16
// 256^3 424 / 412, 512^3 419 / 389, 64 x 1024 x 1024 381 / 301, 16 x 4096
// x 4096 level (DRAM-bound). Only the packed A strip is still prefetched.
//
// Only gemm_avx512.cpp and gemm_avx512_bf16.cpp include this (AVX-512 flags);
// anonymous namespace for the reason given in gemm_pack.h.

#include <immintrin.h>

#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/gemm_avx512_tile.h"

namespace bp::kernels::cpu::detail {

// The bf16 pair at p in every 32-bit lane. p may be only 2-byte aligned (A
// read in place starts a pair at any element), so it is read with memcpy:
// the same single load, without a misaligned int32 access.
inline __m512 broadcast_bf16_pair(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_castsi512_ps(_mm512_set1_epi32(v));
}
namespace {

// The bytes of one k unit of an A row: an fp32 or f64 value, or a bf16 pair.
template <class Acc, class Step>
constexpr int kLane = Step::kUnit == 2 ? 4 : static_cast<int>(sizeof(Acc));

// fp32 / f64: one k step is one source row of B, NV vectors of it.
template <class Acc>
struct FmaDirect {
  using V = Zmm<Acc>;
  using R = typename V::R;
  static constexpr int kUnit = 1;
  static constexpr bool kNarrowable = true;  // a ragged strip may use fewer vectors
  // Loads the first n columns of the row at b (Masked: zeros past n; never
  // reads past n, which may be the end of the matrix).
  template <int NV, bool Masked>
  static void load(const char* b, int64_t /*rs*/, int n, R (&bv)[NV]) {
    const Acc* row = reinterpret_cast<const Acc*>(b);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      if constexpr (Masked) {
        const int left = n - v * V::L;
        const unsigned mask = left >= V::L ? (1u << V::L) - 1 : (left > 0 ? (1u << left) - 1 : 0u);
        bv[v] = V::loadu_mask(row + v * V::L, mask);
      } else if constexpr (sizeof(Acc) == 4) {
        bv[v] = _mm512_loadu_ps(row + v * V::L);
      } else {
        bv[v] = _mm512_loadu_pd(row + v * V::L);
      }
    }
  }
};

// bf16 pairs: one unit is two source rows (k = 2q, 2q + 1) of 32 bf16
// columns. Interleaving them in registers with vpunpck{l,h}wd is one cheap
// shuffle per vector, but it works within 128-bit lanes: the low vector
// holds columns 0-3, 8-11, 16-19, 24-27 and the high one the rest, in that
// order. finish() puts the columns back in order once per tile.
struct Bf16PairDirect {
  using R = __m512;
  static constexpr int kUnit = 2;
  // n <= 16 (a batch of 16 x 16 products) takes a one-vector tile: the two
  // rows' 16 columns are interleaved by one vpermt2w, in column order.
  static constexpr bool kNarrowable = true;
  static __m512i row(const char* b, int n, bool masked) {
    return masked ? _mm512_maskz_loadu_epi16(n >= 32 ? ~0u : (1u << n) - 1, b) : _mm512_loadu_si512(b);
  }
  static void interleave(__m512i r0, __m512i r1, R (&bv)[2]) {
    bv[0] = _mm512_castsi512_ps(_mm512_unpacklo_epi16(r0, r1));
    bv[1] = _mm512_castsi512_ps(_mm512_unpackhi_epi16(r0, r1));
  }
  static void interleave(__m512i r0, __m512i r1, R (&bv)[1]) {
    const __m512i idx = _mm512_setr_epi32(0x200000, 0x210001, 0x220002, 0x230003, 0x240004, 0x250005, 0x260006,
                                          0x270007, 0x280008, 0x290009, 0x2a000a, 0x2b000b, 0x2c000c, 0x2d000d,
                                          0x2e000e, 0x2f000f);  // word pairs (j, 32 + j), j = 0..15
    bv[0] = _mm512_castsi512_ps(_mm512_permutex2var_epi16(r0, idx, r1));
  }
  template <int NV, bool Masked>
  static void load(const char* b, int64_t rs, int n, R (&bv)[NV]) {
    static_assert(NV == 1 || NV == 2);
    // One vector's tile reads 16 columns (masked below 16), never past them.
    const bool masked = Masked || NV == 1;
    const int cols = NV == 1 ? std::min(n, 16) : n;
    interleave(row(b, cols, masked), row(b + rs, cols, masked), bv);
  }
  // An odd k: the last unit's second row is zero (not read: it is past k).
  template <int NV, bool Masked>
  static void load_last(const char* b, int n, R (&bv)[NV]) {
    const bool masked = Masked || NV == 1;
    interleave(row(b, NV == 1 ? std::min(n, 16) : n, masked), _mm512_setzero_si512(), bv);
  }
  // Columns 0-15 and 16-31 of a tile row from its (low, high) accumulators.
  static R first_half(R lo, R hi) {
    return _mm512_permutex2var_ps(lo, _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23), hi);
  }
  static R second_half(R lo, R hi) {
    return _mm512_permutex2var_ps(lo, _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31),
                                  hi);
  }
};

// ROWS rows x NV vectors, A from an A source (PackedA or RowsA in
// gemm_avx512_tile.h), B read in place: `k` source rows at byte stride rs,
// n columns. Masked: n < NV vectors' worth.
// noinline: each variant is its own function, as for the packed tiles; all
// of them inlined into direct_tile left GCC keeping the accumulators in
// memory (a store per FMA: half the speed).
// Round: as micro_tile_cols's (the rounding epilogue into out when not void).
template <class Acc, int ROWS, int NV, class Step, bool Masked, class Round = void, class ASrc>
__attribute__((noinline)) void direct_tile_cols(int64_t k, ASrc a, const char* b, int64_t rs, Acc* c, int64_t rs_c,
                                                int64_t cs_c, int m, int n, Acc alpha, Acc beta,
                                                uint16_t* out = nullptr, int64_t rs_out = 0) {
  using V = Zmm<Acc>;
  using R = typename V::R;
  R acc[ROWS][NV];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
  // Whole units in the loop; an odd last one of the pairs step (its second
  // row is past k) after it, written out again: a helper or lambda for the
  // shared body made GCC keep the accumulators in memory.
  const int64_t units = k / Step::kUnit, unit_bytes = Step::kUnit * rs;
  for (int64_t u = 0; u < units; ++u) {
    R bv[NV];
    Step::template load<NV, Masked>(b, rs, n, bv);
    a.prefetch();  // B: Note [Direct B without software prefetch]
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      R ai;
      if constexpr (Step::kUnit == 2) {
        ai = broadcast_bf16_pair(a.row(i));
      } else {
        ai = V::set1(*reinterpret_cast<const Acc*>(a.row(i)));
      }
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        if constexpr (Step::kUnit == 2) {
          acc[i][v] = _mm512_dpbf16_ps(acc[i][v], (__m512bh)ai, (__m512bh)bv[v]);
        } else {
          acc[i][v] = V::fma(ai, bv[v], acc[i][v]);
        }
      }
    }
    a.next();
    b += unit_bytes;
  }
  if constexpr (Step::kUnit == 2) {
    if (k % 2) {
      R bv[NV];
      Step::template load_last<NV, Masked>(b, n, bv);
#pragma GCC unroll 16
      for (int i = 0; i < ROWS; ++i) {
        // A packed strip's pair has a zero partner already; in place, the
        // partner is past k.
        const R ai = ASrc::kRows ? bcast_first_of_pair(a.row(i))
                                 : broadcast_bf16_pair(a.row(i));
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], (__m512bh)ai, (__m512bh)bv[v]);
      }
    }
    if constexpr (NV == 2) {  // the one-vector tile's columns are in order already
#pragma GCC unroll 16
      for (int i = 0; i < ROWS; ++i) {
        const R c0 = Step::first_half(acc[i][0], acc[i][1]), c1 = Step::second_half(acc[i][0], acc[i][1]);
        acc[i][0] = c0;
        acc[i][1] = c1;
      }
    }
  }
  TileSink<Acc, ROWS, NV, Round>{c, rs_c, cs_c, out, rs_out}(acc, m, n, alpha, beta);
}

// The direct micro-kernel: m <= MR rows, n <= NV vectors' worth of columns
// (NV * L, or 32 bf16 columns for the pairs); fewer rows and, for the fp32
// step, fewer vectors on ragged edges, masked loads only on a ragged strip.
template <class Acc, int MR, int NV, class Step, class Round = void, class ASrc>
void direct_tile_any(int64_t k, ASrc a, const void* b_v, int64_t rs_b, Acc* c, int64_t rs_c, int64_t cs_c, int m,
                     int n, Acc alpha, Acc beta, uint16_t* out, int64_t rs_out) {
  constexpr int L = Zmm<Acc>::L;
  constexpr int src_bytes = Step::kUnit == 2 ? 2 : static_cast<int>(sizeof(Acc));
  constexpr int full_cols = Step::kUnit == 2 ? 32 : NV * L;
  const char* b = static_cast<const char*>(b_v);
  const int64_t rs = rs_b * src_bytes;
  by_rows<MR>(m, [&]<int ROWS>() {
    if (n == full_cols)
      return direct_tile_cols<Acc, ROWS, NV, Step, false, Round>(k, a, b, rs, c, rs_c, cs_c, m, n, alpha, beta,
                                                                     out, rs_out);
    if constexpr (Step::kNarrowable && NV > 1) {
      if (n <= L)
        return direct_tile_cols<Acc, ROWS, 1, Step, true, Round>(k, a, b, rs, c, rs_c, cs_c, m, n, alpha, beta,
                                                                     out, rs_out);
    }
    if constexpr (Step::kNarrowable && NV > 2) {
      if (n <= 2 * L)
        return direct_tile_cols<Acc, ROWS, 2, Step, true, Round>(k, a, b, rs, c, rs_c, cs_c, m, n, alpha, beta,
                                                                     out, rs_out);
    }
    direct_tile_cols<Acc, ROWS, NV, Step, true, Round>(k, a, b, rs, c, rs_c, cs_c, m, n, alpha, beta, out,
                                                           rs_out);
  });
}

template <class Acc, int MR, int NV, class Step>
void direct_tile(int64_t k, const void* a, const void* b_v, int64_t rs_b, Acc* c, int64_t rs_c, int64_t cs_c, int m,
                 int n, Acc alpha, Acc beta) {
  direct_tile_any<Acc, MR, NV, Step>(k, PackedA<MR, kLane<Acc, Step>>{static_cast<const char*>(a)}, b_v, rs_b, c,
                                     rs_c, cs_c, m, n, alpha, beta, nullptr, 0);
}

// DirectOut16Fn (gemm_kernel.h): the direct tile of a 16-bit product's last
// k block, rounded by Round into out.
template <int MR, int NV, class Step, class Round>
void direct_tile_out16(int64_t k, const void* a, const void* b, int64_t rs_b, const float* c, int64_t rs_c,
                       uint16_t* out, int64_t rs_out, int m, int n, float alpha, float beta) {
  direct_tile_any<float, MR, NV, Step, Round>(k, PackedA<MR, kLane<float, Step>>{static_cast<const char*>(a)}, b,
                                              rs_b, const_cast<float*>(c), rs_c, 1, m, n, alpha, beta, out, rs_out);
}

// RowsAKernelFn (gemm_kernel.h, Note [GEMM direct A] in gemm.cpp): A read in
// place (row-major, rows rs_a bytes apart); B a packed strip (rs_b == 0,
// PackedStep's layout) or read in place (rs_b elements between rows,
// DirectStep); the tile written to C, or rounded by Round into out when out
// is set (the last k block of a 16-bit product).
template <class Acc, int MR, int NV, class PackedStep, class DirectStep, class Round, class ASrc>
void rows_a_tile_from(int64_t k, ASrc rows, const void* b, int64_t rs_b, Acc* c, int64_t rs_c, int64_t cs_c, int m,
                      int n, Acc alpha, Acc beta, uint16_t* out, int64_t rs_out) {
  if constexpr (!std::is_void_v<Round>) {
    if (out != nullptr) {
      if (rs_b == 0) return micro_tile_any<Acc, MR, NV, PackedStep, Round>(k, rows, b, c, rs_c, 1, m, n, alpha, beta,
                                                                          out, rs_out);
      return direct_tile_any<Acc, MR, NV, DirectStep, Round>(k, rows, b, rs_b, c, rs_c, 1, m, n, alpha, beta, out,
                                                             rs_out);
    }
  }
  if (rs_b == 0) return micro_tile_any<Acc, MR, NV, PackedStep>(k, rows, b, c, rs_c, cs_c, m, n, alpha, beta, nullptr, 0);
  direct_tile_any<Acc, MR, NV, DirectStep>(k, rows, b, rs_b, c, rs_c, cs_c, m, n, alpha, beta, nullptr, 0);
}

template <class Acc, int MR, int NV, class PackedStep, class DirectStep, class Round>
void rows_a_tile(int64_t k, const void* a, int64_t rs_a, const void* b, int64_t rs_b, Acc* c, int64_t rs_c,
                 int64_t cs_c, int m, int n, Acc alpha, Acc beta, uint16_t* out, int64_t rs_out) {
  constexpr int lane = kLane<Acc, PackedStep>;
  const char* const p = static_cast<const char*>(a);
  // A tile higher than m would read rows past the matrix: clamp them (RowsA).
  if (tile_rows<MR>(m) == m)
    return rows_a_tile_from<Acc, MR, NV, PackedStep, DirectStep, Round>(
        k, RowsA<lane>{p, rs_a}, b, rs_b, c, rs_c, cs_c, m, n, alpha, beta, out, rs_out);
  rows_a_tile_from<Acc, MR, NV, PackedStep, DirectStep, Round>(k, RowsA<lane, true>{p, rs_a, m - 1}, b, rs_b, c, rs_c,
                                                               cs_c, m, n, alpha, beta, out, rs_out);
}

}  // namespace
}  // namespace bp::kernels::cpu::detail
