#pragma once
// The AVX-512 register-tile micro-kernel shared by gemm_avx512.cpp (fp32,
// f64) and gemm_avx512_bf16.cpp (bf16 pairs): only those files include it,
// and they are compiled with AVX-512 flags. Anonymous namespace for the
// reason given in gemm_pack.h.
//
// Tile shape: MR rows x NV vectors, all MR x NV accumulators in registers
// (8 x 3 = 24 for fp32/f64, 14 x 2 = 28 for bf16 pairs; plus NV B vectors
// and one broadcast A value, within the 32 zmm registers). Per k step: NV
// vector loads and MR broadcasts against MR x NV FMAs, under the two 512-bit
// loads per cycle Zen 5 feeds while retiring two FMAs per cycle; 24+
// independent chains hide the 4-cycle FMA latency several times over.

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/round16_avx512.h"
#include "kernels/cpu/transpose8x8_avx.h"

namespace bp::kernels::cpu::detail {
namespace {

// Vector operations per accumulator type; `Step` supplies the k-step.
template <class Acc>
struct Zmm;
template <>
struct Zmm<float> {
  using R = __m512;
  static constexpr int L = 16;
  static R zero() { return _mm512_setzero_ps(); }
  static R set1(float x) { return _mm512_set1_ps(x); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, R v) { _mm512_store_ps(p, v); }
  static R loadu_mask(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
  static void storeu_mask(float* p, __mmask16 m, R v) { _mm512_mask_storeu_ps(p, m, v); }
};
template <>
struct Zmm<double> {
  using R = __m512d;
  static constexpr int L = 8;
  static R zero() { return _mm512_setzero_pd(); }
  static R set1(double x) { return _mm512_set1_pd(x); }
  static R mul(R a, R b) { return _mm512_mul_pd(a, b); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_pd(a, b, c); }
  static void store(double* p, R v) { _mm512_store_pd(p, v); }
  static R loadu_mask(const double* p, __mmask8 m) { return _mm512_maskz_loadu_pd(m, p); }
  static void storeu_mask(double* p, __mmask8 m, R v) { _mm512_mask_storeu_pd(p, m, v); }
};

// fp32 / f64 k-step: C_i += a_i * B for one k.
template <class Acc>
struct FmaStep {
  using V = Zmm<Acc>;
  using R = typename V::R;
  static constexpr int kUnit = 1;
  static constexpr int lane_bytes = sizeof(Acc);  // packed bytes per line per k unit
  static R load_b(const void* b, int v) {
    const Acc* p = static_cast<const Acc*>(b) + v * V::L;
    if constexpr (sizeof(Acc) == 4) {
      return _mm512_load_ps(p);
    } else {
      return _mm512_load_pd(p);
    }
  }
  // One k unit of an A row (an A source's row(i), below), broadcast.
  static R bcast(const char* p) { return V::set1(*reinterpret_cast<const Acc*>(p)); }
  static R step(R c, R a, R b) { return V::fma(a, b, c); }
};

// Note [GEMM direct A] (gemm.cpp): where a register tile reads A from.
// A packed strip: per k unit, the Lane bytes of each of its MR rows side by
// side (Note [GEMM packed panels]).
template <int MR, int Lane>
struct PackedA {
  static constexpr bool kRows = false;
  const char* p;
  const char* row(int i) const { return p + i * Lane; }
  void next() { p += MR * Lane; }
  void prefetch() const { _mm_prefetch(p + 16 * MR * Lane, _MM_HINT_T0); }
};
// A read in place: row-major (k contiguous), rows rs bytes apart, so one k
// unit of a row (an fp32, an f64, a bf16 pair) is Lane contiguous bytes.
// Its rows stream sequentially, which the hardware prefetchers follow.
// A tile is 2, 4, 8 or MR rows high (by_rows); with fewer rows than that
// (Clamp), rows past `last` would be past the matrix (a packed strip has
// zeros there), so they re-read row `last`; the tile never writes them.
template <int Lane, bool Clamp = false>
struct RowsA {
  static constexpr bool kRows = true;
  const char* p;
  int64_t rs;
  int last = 0;
  const char* row(int i) const { return p + (Clamp && i > last ? last : i) * rs; }
  void next() { p += Lane; }
  void prefetch() const {}
};

// The odd last k of bf16 pairs read in place: the pair's first value with a
// zero partner (the second is past k: garbage, or past the matrix).
inline __m512 bcast_first_of_pair(const char* p) {
  return _mm512_castsi512_ps(_mm512_set1_epi32(*reinterpret_cast<const uint16_t*>(p)));
}

// C[0:m, 0:n] = alpha * acc + beta * C. Row-major C (cs == 1) goes straight
// from registers, with masks on a ragged right edge; other strides through a
// small buffer.
template <class Acc, int MR, int NV>
inline void write_tile(const typename Zmm<Acc>::R (&acc)[MR][NV], Acc* c, int64_t rs, int64_t cs, int m, int n,
                       Acc alpha, Acc beta) {
  using V = Zmm<Acc>;
  constexpr int L = V::L;
  const auto va = V::set1(alpha), vb = V::set1(beta);
  if (cs == 1) {
    unsigned mask[NV];
    for (int v = 0; v < NV; ++v) {
      const int left = n - v * L;
      mask[v] = left >= L ? (1u << L) - 1 : (left > 0 ? (1u << left) - 1 : 0u);
    }
    // Fully unrolled (as every loop over the accumulators): indexing them
    // with a run-time row number would make GCC keep them all in memory.
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      if (i >= m) break;
      Acc* ci = c + i * rs;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        auto r = V::mul(va, acc[i][v]);
        if (beta != Acc(0)) r = V::fma(vb, V::loadu_mask(ci + v * L, mask[v]), r);
        V::storeu_mask(ci + v * L, mask[v], r);
      }
    }
    return;
  }
  alignas(64) Acc tile[MR][NV * L];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) V::store(&tile[i][v * L], acc[i][v]);
  store_tile<Acc>(&tile[0][0], NV * L, c, rs, cs, m, n, alpha, beta);
}

// write_tile's counterpart for the last k block of a 16-bit product (Note
// [GEMM rounding epilogue] in gemm.cpp): alpha * acc + beta * C (row-major
// fp32 C, read only when beta != 0) rounded by Round (round16_avx512.h) and
// stored to the 16-bit output, with masks on a ragged right edge.
template <int MR, int NV, class Round>
inline void write_tile_rounded(const __m512 (&acc)[MR][NV], const float* c, int64_t rs_c, uint16_t* out,
                               int64_t rs_out, int m, int n, float alpha, float beta) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  __mmask16 mask[NV];
  for (int v = 0; v < NV; ++v) {
    const int left = n - v * 16;
    mask[v] = static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (left > 0 ? (1u << left) - 1 : 0u));
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    if (i >= m) break;
    __m512 r[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      r[v] = alpha == 1.0f ? acc[i][v] : _mm512_mul_ps(va, acc[i][v]);
      if (beta != 0.0f) r[v] = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask[v], c + i * rs_c + v * 16), r[v]);
    }
#ifdef __AVX512BF16__
    // vcvtne2ps2bf16 rounds two vectors to nearest-even in one instruction,
    // but flushes subnormals and keeps NaN payloads: rows holding either
    // take Round's exact path, so the bits are Round's either way (tiles of
    // small products spent a fifth of their time rounding).
    if constexpr (std::is_same_v<Round, RoundToBf16> && NV <= 2) {
      __mmask16 special = 0;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) special |= _mm512_fpclass_ps_mask(r[v], 0xA1);  // NaN or subnormal
      if (special == 0) {
        if constexpr (NV == 2) {
          const __mmask32 both = static_cast<__mmask32>(mask[0]) | (static_cast<__mmask32>(mask[1]) << 16);
          _mm512_mask_storeu_epi16(out + i * rs_out, both, (__m512i)_mm512_cvtne2ps_pbh(r[1], r[0]));
        } else {
          _mm256_mask_storeu_epi16(out + i * rs_out, mask[0], (__m256i)_mm512_cvtneps_pbh(r[0]));
        }
        continue;
      }
    }
#endif
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm256_mask_storeu_epi16(out + i * rs_out + v * 16, mask[v], Round::round(r[v]));
  }
}

// Where a finished register tile goes: C through write_tile (Round = void),
// or rounded to 16 bits into `out` (write_tile_rounded).
template <class Acc, int MR, int NV, class Round>
struct TileSink {
  Acc* c;
  int64_t rs_c, cs_c;
  uint16_t* out = nullptr;
  int64_t rs_out = 0;
  void operator()(const typename Zmm<Acc>::R (&acc)[MR][NV], int m, int n, Acc alpha, Acc beta) const {
    if constexpr (std::is_void_v<Round>) {
      write_tile<Acc, MR, NV>(acc, c, rs_c, cs_c, m, n, alpha, beta);
    } else {
      write_tile_rounded<MR, NV, Round>(acc, c, rs_c, out, rs_out, m, n, alpha, beta);
    }
  }
};

// The register tile: ROWS rows x NV vectors of an A strip packed MR rows wide
// and a B strip packed NB vectors wide (ROWS <= MR, NV <= NB: a ragged strip
// computes only the rows and columns it has). `k` counts source k steps; the
// packed strips hold ceil(k / kUnit) units of MR (A) and NB vectors (B).
// A is an A source (PackedA or RowsA above).
template <class Acc, int ROWS, int NV, int NB, class Step, class Round = void, class ASrc>
inline void micro_tile_cols(int64_t k, ASrc a, const void* b_v, Acc* c, int64_t rs_c, int64_t cs_c, int m, int n,
                            Acc alpha, Acc beta, uint16_t* out = nullptr, int64_t rs_out = 0) {
  using V = Zmm<Acc>;
  using R = typename V::R;
  const char* b = static_cast<const char*>(b_v);
  constexpr int b_step = NB * V::L * Step::lane_bytes;
  R acc[ROWS][NV];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
  // Fetch the C tile early: it is written once per KC steps and would
  // otherwise miss at the end of every call.
  if (cs_c == 1) {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c + i * rs_c), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(c + i * rs_c + NV * V::L) - 1, _MM_HINT_T0);
    }
  }
  // A read in place with an odd k: the last pair is peeled (below).
  constexpr bool kPeel = ASrc::kRows && Step::kUnit == 2;
  const int64_t units = kPeel ? k / 2 : (k + Step::kUnit - 1) / Step::kUnit;
  for (int64_t u = 0; u < units; ++u) {
    R bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = Step::load_b(b, v);
    // Every cache line of B 8 steps ahead (one line of three used to be
    // fetched) and A 16 ahead: with KC = 384 a B strip (72 KiB) no longer
    // fits in L1. On its own (at KC = 256) this measured within noise.
#pragma GCC unroll 4
    for (int line = 0; line < b_step; line += 64) _mm_prefetch(b + 8 * b_step + line, _MM_HINT_T0);
    a.prefetch();
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      const R ai = Step::bcast(a.row(i));
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = Step::step(acc[i][v], ai, bv[v]);
    }
    a.next();
    b += b_step;
  }
  if constexpr (kPeel) {
    // Written out again rather than shared through a helper, which would
    // leave GCC keeping the accumulators in memory (gemm_avx512_direct.h).
    if (k % 2) {
      R bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = Step::load_b(b, v);
#pragma GCC unroll 16
      for (int i = 0; i < ROWS; ++i) {
        const R ai = bcast_first_of_pair(a.row(i));
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = Step::step(acc[i][v], ai, bv[v]);
      }
    }
  }
  TileSink<Acc, ROWS, NV, Round>{c, rs_c, cs_c, out, rs_out}(acc, m, n, alpha, beta);
}

// The tile height by_rows (below) picks for m rows.
template <int MR>
constexpr int tile_rows(int m) {
  return m <= 2 && MR > 2 ? 2 : m <= 4 && MR > 4 ? 4 : m <= 8 && MR > 8 ? 8 : MR;
}

// Calls Tile<ROWS> with the fewest rows (of MR, 8, 4, 2) that cover m: the
// last A strip of a block is ragged whenever m is not a multiple of MR, and a
// full-height tile there is pure waste (m = 16 with the bf16 kernel's MR = 14
// would otherwise compute 28 rows; m = 64 computes 70). Rows past m in the
// chosen tile are the strip's zero padding and are not written.
template <int MR, class Tile>
inline void by_rows(int m, Tile&& tile) {
  if constexpr (MR > 2) {
    if (m <= 2) return tile.template operator()<2>();
  }
  if constexpr (MR > 4) {
    if (m <= 4) return tile.template operator()<4>();
  }
  if constexpr (MR > 8) {
    if (m <= 8) return tile.template operator()<8>();
  }
  tile.template operator()<MR>();
}

// The micro-kernel (MicroKernelFn). The last B strip of a block is ragged
// whenever n is not a multiple of NR (n = 256 with NR = 48: 16 of 48 columns
// used, so a full-width tile wastes 11% of all FMAs at n = 256, 3% at 1024);
// it gets a tile only as wide as the vectors it covers, and likewise only as
// many rows as the A strip has (by_rows).
template <class Acc, int MR, int NV, class Step, class Round = void, class ASrc>
void micro_tile_any(int64_t k, ASrc a, const void* b, Acc* c, int64_t rs_c, int64_t cs_c, int m, int n, Acc alpha,
                    Acc beta, uint16_t* out, int64_t rs_out) {
  constexpr int L = Zmm<Acc>::L;
  by_rows<MR>(m, [&]<int ROWS>() {
    if constexpr (NV > 1) {
      if (n <= L)
        return micro_tile_cols<Acc, ROWS, 1, NV, Step, Round>(k, a, b, c, rs_c, cs_c, m, n, alpha, beta, out, rs_out);
    }
    if constexpr (NV > 2) {
      if (n <= 2 * L)
        return micro_tile_cols<Acc, ROWS, 2, NV, Step, Round>(k, a, b, c, rs_c, cs_c, m, n, alpha, beta, out, rs_out);
    }
    micro_tile_cols<Acc, ROWS, NV, NV, Step, Round>(k, a, b, c, rs_c, cs_c, m, n, alpha, beta, out, rs_out);
  });
}

template <class Acc, int MR, int NV, class Step>
void micro_tile(int64_t k, const void* a, const void* b, Acc* c, int64_t rs_c, int64_t cs_c, int m, int n, Acc alpha,
                Acc beta) {
  micro_tile_any<Acc, MR, NV, Step>(k, PackedA<MR, Step::lane_bytes>{static_cast<const char*>(a)}, b, c, rs_c, cs_c,
                                    m, n, alpha, beta, nullptr, 0);
}

// MicroOut16Fn (gemm_kernel.h): the fp32-accumulating tile, rounded by Round.
template <int MR, int NV, class Step, class Round>
void micro_tile_out16(int64_t k, const void* a, const void* b, const float* c, int64_t rs_c, uint16_t* out,
                      int64_t rs_out, int m, int n, float alpha, float beta) {
  micro_tile_any<float, MR, NV, Step, Round>(k, PackedA<MR, Step::lane_bytes>{static_cast<const char*>(a)}, b,
                                             const_cast<float*>(c), rs_c, 1, m, n, alpha, beta, out, rs_out);
}

}  // namespace
// The few-row products' tile (Note [Few-row products] in gemm.cpp): R rows
// of A times C_ columns of B, both contiguous along k, Dot::kK k steps per
// vector (16 fp32, or 32 bf16 as 16 pairs), each B load serving R rows,
// masked loads for the k tail; then c = alpha · (the lanes' sum) + beta · c
// (c not read when beta is 0). Dot: T, kK, load(p), load_tail(left, p)
// (zeros past `left` elements), dot(acc, a, b); values travel as __m512 bits.
template <class Dot>
struct FewRowsTile {
  template <int R, int C_>
  static void run(int64_t k, const typename Dot::T* a, int64_t a_rs, const typename Dot::T* b, int64_t b_cs, float* c,
                  int64_t c_rs, int64_t c_cs, float alpha, float beta) {
    __m512 acc[R][C_];
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < C_; ++j) acc[r][j] = _mm512_setzero_ps();
    const int64_t full = k / Dot::kK * Dot::kK;
    for (int64_t p = 0; p < full; p += Dot::kK) {
      __m512 bv[C_];
      for (int j = 0; j < C_; ++j) bv[j] = Dot::load(b + j * b_cs + p);
      for (int r = 0; r < R; ++r) {
        const __m512 av = Dot::load(a + r * a_rs + p);
        for (int j = 0; j < C_; ++j) acc[r][j] = Dot::dot(acc[r][j], av, bv[j]);
      }
    }
    if (full < k)
      for (int r = 0; r < R; ++r) {
        const __m512 av = Dot::load_tail(k - full, a + r * a_rs + full);
        for (int j = 0; j < C_; ++j) acc[r][j] = Dot::dot(acc[r][j], av, Dot::load_tail(k - full, b + j * b_cs + full));
      }
    for (int r = 0; r < R; ++r)
      for (int j = 0; j < C_; ++j) {
        const float dot = _mm512_reduce_add_ps(acc[r][j]);
        float* cij = c + r * c_rs + j * c_cs;
        *cij = beta == 0.0f ? alpha * dot : alpha * dot + beta * *cij;
      }
  }
};

}  // namespace bp::kernels::cpu::detail
