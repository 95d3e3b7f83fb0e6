// sparse24_avx2: the 2:4 kernel for AVX2 + FMA (+ F16C) CPUs (sparse24.h),
// f32 arithmetic on f32, bf16 or f16 operands (16-bit ones widened to f32 as
// they are loaded). Two shapes of the same product:
//
// - Panels (several rows of X): as the AVX-512 kernel (sparse24_blocking.h),
//   Cᵀ = W·Xᵀ with a register tile of R rows of W times V 8-lane vectors of
//   packed X rows; per group and stored entry one broadcast and V FMAs whose
//   memory operand is the packed X row the group's code names, so the
//   metadata costs two ALU ops per stored entry, never a shuffle.
// - Row dots (a decode step, m <= kRowDotMax): a panel would fill 1 of 8
//   lanes, so W's rows are walked along k instead, 8 stored entries (4
//   groups, 16 columns of X) per FMA: the 2 meta bytes of those groups index
//   a 256-entry table of in-register permutations (vpermps) that bring each
//   stored entry's column of X into its lane; W streams once, at half the
//   bytes of the dense weight.

#include <immintrin.h>

#include <cstring>

#include "backplane/tensor.h"
#include "kernels/cpu/sparse24.h"
#include "kernels/cpu/sparse24_blocking.h"

namespace bp::kernels::cpu {
namespace {

using Type = Sparse24Type;

// Element i of an operand of type T, widened to f32.
template <Type T>
inline float scalar_at(const void* p, int64_t i) {
  if constexpr (T == Type::f32) {
    return static_cast<const float*>(p)[i];
  } else {
    const uint16_t bits = static_cast<const uint16_t*>(p)[i];
    if constexpr (T == Type::f16) {
      return _cvtsh_ss(bits);
    } else {
      const uint32_t wide = uint32_t{bits} << 16;
      float f;
      std::memcpy(&f, &wide, sizeof f);
      return f;
    }
  }
}

// Elements i .. i + 7, widened to f32.
template <Type T>
inline __m256 load8(const void* p, int64_t i) {
  if constexpr (T == Type::f32) {
    return _mm256_loadu_ps(static_cast<const float*>(p) + i);
  } else {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + i));
    if constexpr (T == Type::f16) {
      return _mm256_cvtph_ps(bits);
    } else {
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
    }
  }
}

// Elements i .. i + 3 widened to f32 in the low half, zeros above.
template <Type T>
inline __m256 load4(const void* p, int64_t i) {
  alignas(16) float lo[4];
  for (int e = 0; e < 4; ++e) lo[e] = scalar_at<T>(p, i + e);
  return _mm256_castps128_ps256(_mm_load_ps(lo));  // upper half zeroed by the load
}

// ---------------------------------------------------------------- panels

template <int V, int R, int G>
struct Tile {
  static constexpr int kVecs = V;
  static constexpr int64_t kWidth = 8 * V;
  static constexpr int kRows = R;
  static constexpr int64_t kGroups = G;
};

// Xp[panel][row c < kp][width] (f32): X(r0 + rr, c), zero past m and k.
template <Type T>
void pack_panels(const Sparse24Input& x, int64_t k, int64_t kp, int64_t width, float* xp) {
  const int64_t panels = (x.m + width - 1) / width;
  const int team = threads::team_size(panels);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t p = 0; p < panels; ++p) {
    float* dst = xp + p * kp * width;
    const int64_t r0 = p * width, rows = std::min(width, x.m - r0);
    std::fill(dst, dst + kp * width, 0.0f);
    for (int64_t rr = 0; rr < rows; ++rr)
      for (int64_t c = 0; c < k; ++c) dst[c * width + rr] = scalar_at<T>(x.data, (r0 + rr) * x.rs + c * x.cs);
  }
}

// acc[R rows][8 V] += groups [g0, g0 + ng) of R rows of W times packed X
// (g0 and ng even: g and the k-block are). vals[r][2 i] is the first stored
// entry of group g0 + i (f32).
template <int R, int V>
void tile(const float* const* vals, const uint8_t* const* meta, int64_t g0, int64_t ng, const float* xp, float* acc,
          bool first) {
  constexpr int64_t kWidth = 8 * V;
  // Every loop over the accumulators fully unrolled: one left rolled makes
  // GCC keep the array in memory, storing it back after every group.
  __m256 a[R][V];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) a[r][v] = first ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + r * kWidth + 8 * v);
  // Groups in pairs, one meta byte per row and pair: each 2-bit column of a
  // code is masked in place and scaled straight to a byte offset into the
  // packed X (2 ALU ops; shifting it down first cost 2 more per entry, which
  // this loop of few FMAs per decode noticeably paid).
  constexpr int64_t kRowBytes = kWidth * sizeof(float);
  const char* xg = reinterpret_cast<const char*>(xp + g0 * 4 * kWidth);
  for (int64_t i = 0; i < ng; i += 2, xg += 8 * kRowBytes) {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const unsigned b = meta[r][(g0 + i) >> 1];
      const int64_t first[2] = {(b & 0x03u) * kRowBytes, (b & 0x30u) * (kRowBytes / 16) + 4 * kRowBytes};
      const int64_t second[2] = {(b & 0x0Cu) * (kRowBytes / 4),
                                 (kRowBytes % 64 == 0 ? (b & 0xC0u) * (kRowBytes / 64) : (b >> 6) * kRowBytes) +
                                     4 * kRowBytes};
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const float* p0 = reinterpret_cast<const float*>(xg + first[h]);
        const float* p1 = reinterpret_cast<const float*>(xg + second[h]);
        const __m256 b0 = _mm256_broadcast_ss(vals[r] + 2 * (i + h)), b1 = _mm256_broadcast_ss(vals[r] + 2 * (i + h) + 1);
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
          a[r][v] = _mm256_fmadd_ps(b0, _mm256_loadu_ps(p0 + 8 * v), a[r][v]);
          a[r][v] = _mm256_fmadd_ps(b1, _mm256_loadu_ps(p1 + 8 * v), a[r][v]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) _mm256_storeu_ps(acc + r * kWidth + 8 * v, a[r][v]);
}

// Rows j .. j + R - 1 of W over groups [g0, g0 + ng): f32 values are read in
// place; 16-bit ones are widened into `wide` first (R * 2 * ng floats), once
// per k-block of a tile, 8 at a time.
template <Type T, int R, int V>
void tile_rows(const Sparse24& w, int64_t j, int64_t g0, int64_t ng, const float* xp, float* acc, bool first,
               float* wide) {
  const float* vals[R];
  const uint8_t* meta[R];
  for (int r = 0; r < R; ++r) {
    meta[r] = w.meta + (j + r) * w.meta_rs;
    const int64_t at = (j + r) * w.values_rs + 2 * g0;
    if constexpr (T == Type::f32) {
      vals[r] = static_cast<const float*>(w.values) + at;
    } else {
      float* dst = wide + r * 2 * ng;
      int64_t e = 0;
      for (; e + 8 <= 2 * ng; e += 8) _mm256_storeu_ps(dst + e, load8<T>(w.values, at + e));
      for (; e < 2 * ng; ++e) dst[e] = scalar_at<T>(w.values, at + e);
      vals[r] = dst;
    }
  }
  tile<R, V>(vals, meta, g0, ng, xp, acc, first);
}

template <Type T, class Shape>
void run_panels(const Sparse24& w, const Sparse24Input& x, float* c, int64_t crs, int64_t ccs) {
  constexpr int V = Shape::kVecs, R = Shape::kRows;
  constexpr int64_t kWidth = Shape::kWidth, kGroups = Shape::kGroups;
  const int64_t g = groups_of(w.k), kp = 4 * g;
  const int64_t panels = (x.m + kWidth - 1) / kWidth;
  const auto x_bytes = static_cast<std::size_t>(panels * kp * kWidth) * sizeof(float);
  StoragePtr packed = allocate_storage(Device::cpu(), x_bytes);
  float* xp = static_cast<float*>(packed->data());
  pack_panels<T>(x, w.k, kp, kWidth, xp);
  const int64_t panel_bytes = kp * kWidth * static_cast<int64_t>(sizeof(float));
  auto body = [&](int64_t block, int64_t panel) {
    alignas(32) float acc[kBlockRows * kWidth];
    alignas(32) float wide[R * 2 * kGroups];
    const int64_t j0 = block * kBlockRows, rows = std::min(kBlockRows, w.n - j0);
    const float* panel_x = xp + panel * kp * kWidth;
    for (int64_t g0 = 0; g0 < g; g0 += kGroups) {
      const int64_t ng = std::min(kGroups, g - g0);
      int64_t jj = 0;
      for (; jj + R <= rows; jj += R)
        tile_rows<T, R, V>(w, j0 + jj, g0, ng, panel_x, acc + jj * kWidth, g0 == 0, wide);
      for (; jj < rows; ++jj) tile_rows<T, 1, V>(w, j0 + jj, g0, ng, panel_x, acc + jj * kWidth, g0 == 0, wide);
    }
    store_block(acc, rows, kWidth, j0, panel * kWidth, x.m, c, crs, ccs);
  };
  for_each_task_banded(w.n, x.m, kWidth, panel_bytes, body);
}

// ---------------------------------------------------------------- row dots

constexpr int64_t kRowDotMax = 3;  // at 4096 x 4096, 4 rows took longer than a panel of 8

// For each meta byte (two groups, 8 columns of X): the column (0..7) of each
// of its 4 stored entries, in value order. Built at compile time: a
// constructor run at load time, compiled with this file's AVX2 flags, could
// fault on the CPUs this kernel is never chosen for.
struct PermuteTable {
  alignas(16) int32_t columns[256][4]{};
  constexpr PermuteTable() {
    for (int byte = 0; byte < 256; ++byte)
      for (int half = 0; half < 2; ++half) {
        const int code = (byte >> (4 * half)) & 15;
        columns[byte][2 * half] = 4 * half + (code & 3);
        columns[byte][2 * half + 1] = 4 * half + (code >> 2);
      }
  }
};
constexpr PermuteTable kPermute;

inline __m128i columns_of(uint8_t byte) {
  return _mm_load_si128(reinterpret_cast<const __m128i*>(kPermute.columns[byte]));
}

// Xr[row][kp + 8] (f32): X's rows, zero past k (the 8 more let a chunk of 2
// groups at the end load 16 columns).
template <Type T>
void pack_rows(const Sparse24Input& x, int64_t k, int64_t stride, float* xr) {
  for (int64_t r = 0; r < x.m; ++r) {
    float* dst = xr + r * stride;
    std::fill(dst, dst + stride, 0.0f);
    for (int64_t c = 0; c < k; ++c) dst[c] = scalar_at<T>(x.data, r * x.rs + c * x.cs);
  }
}

inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// C(r, j) for M rows of X and one row j of W: per chunk of 4 groups the 8
// stored entries times the 8 columns of X they name (two permutes of X's 16
// columns, the low half from the first 8, the high from the next).
template <Type T, int M>
inline void chunk(const Sparse24& w, int64_t at, const uint8_t* meta, int64_t q, const float* xr, int64_t stride,
                  __m256* acc) {
  const __m256i cols = _mm256_set_m128i(columns_of(meta[2 * q + 1]), columns_of(meta[2 * q]));
  const __m256 v = load8<T>(w.values, at + 8 * q);
#pragma GCC unroll 4
  for (int r = 0; r < M; ++r) {
    const float* x16 = xr + r * stride + 16 * q;
    const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x16), cols);
    const __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x16 + 8), cols);
    acc[r] = _mm256_fmadd_ps(v, _mm256_blend_ps(lo, hi, 0xF0), acc[r]);
  }
}

// W's values are prefetched this far ahead: the stream the row dots are
// bound by (at 4096 x 4096 x 1 in f32, 1.75x -> 2x the dense GEMV's speed;
// with the hardware prefetcher alone it read about 15% fewer bytes per
// second than the dense GEMV).
constexpr int64_t kPrefetchBytes = 2048;

template <Type T, int M>
void row_dot(const Sparse24& w, int64_t j, int64_t g, const float* xr, int64_t stride, float* c, int64_t crs,
             int64_t ccs) {
  const int64_t at = j * w.values_rs;
  const uint8_t* meta = w.meta + j * w.meta_rs;
  // Two accumulators per row of X, chunks alternating: one FMA chain would
  // wait on its own latency.
  __m256 even[M], odd[M];
  for (int r = 0; r < M; ++r) even[r] = odd[r] = _mm256_setzero_ps();
  const int64_t chunks = g / 4;
  const char* values = static_cast<const char*>(w.values);  // prefetches only (past the end is harmless)
  constexpr int64_t kItem = T == Type::f32 ? 4 : 2;
  int64_t q = 0;
  for (; q + 2 <= chunks; q += 2) {
    _mm_prefetch(values + (at + 8 * q) * kItem + kPrefetchBytes, _MM_HINT_T0);
    chunk<T, M>(w, at, meta, q, xr, stride, even);
    chunk<T, M>(w, at, meta, q + 1, xr, stride, odd);
  }
  if (q < chunks) chunk<T, M>(w, at, meta, q++, xr, stride, even);
  if (4 * q < g) {  // the last 2 groups (g is even): 4 values, the high lanes zero times zero
    const __m256i cols = _mm256_castsi128_si256(columns_of(meta[2 * q]));
    const __m256 v = load4<T>(w.values, at + 8 * q);
    for (int r = 0; r < M; ++r) {
      const __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(xr + r * stride + 16 * q), cols);
      odd[r] = _mm256_fmadd_ps(v, _mm256_blend_ps(lo, _mm256_setzero_ps(), 0xF0), odd[r]);
    }
  }
  for (int r = 0; r < M; ++r) c[r * crs + j * ccs] = hsum(_mm256_add_ps(even[r], odd[r]));
}

template <Type T, int M>
void run_row_dots(const Sparse24& w, const Sparse24Input& x, float* c, int64_t crs, int64_t ccs) {
  const int64_t g = groups_of(w.k), stride = 4 * g + 8;
  StoragePtr packed = allocate_storage(Device::cpu(), static_cast<std::size_t>(M * stride) * sizeof(float));
  float* xr = static_cast<float*>(packed->data());
  pack_rows<T>(x, w.k, stride, xr);
  constexpr int64_t kChunk = 64;  // rows of W per task
  const int64_t tasks = (w.n + kChunk - 1) / kChunk;
  const int team = threads::team_size(w.n * w.k / 65536);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t t = 0; t < tasks; ++t)
    for (int64_t j = t * kChunk; j < std::min(w.n, (t + 1) * kChunk); ++j) row_dot<T, M>(w, j, g, xr, stride, c, crs, ccs);
}

template <Type T>
void run(const Sparse24& w, const Sparse24Input& x, float* c, int64_t crs, int64_t ccs) {
  switch (x.m) {
    case 1: return run_row_dots<T, 1>(w, x, c, crs, ccs);
    case 2: return run_row_dots<T, 2>(w, x, c, crs, ccs);
    case 3: return run_row_dots<T, 3>(w, x, c, crs, ccs);
    default: break;
  }
  static_assert(kRowDotMax == 3);
  // Tiles: 3 vectors x 4 rows (12 accumulators of the 16 ymm registers, 2
  // for the broadcasts) over k-blocks of 64 groups (a 24 KiB slice of packed
  // X in L1) was the fastest at 4096 x 4096 x 256 and 1024 of those tried
  // (V x R = 4 x 3, 3 x 4, 2 x 6, 2 x 7; G = 16 .. 128); few rows of X take
  // narrower panels, which waste fewer lanes.
  if (x.m <= 8) return run_panels<T, Tile<1, 12, 128>>(w, x, c, crs, ccs);
  if (x.m <= 16) return run_panels<T, Tile<2, 6, 64>>(w, x, c, crs, ccs);
  run_panels<T, Tile<3, 4, 64>>(w, x, c, crs, ccs);
}

}  // namespace

void sparse24_avx2(const Sparse24& w, const Sparse24Input& x, Sparse24Type type, float* c, int64_t crs, int64_t ccs) {
  switch (type) {
    case Type::f32: return run<Type::f32>(w, x, c, crs, ccs);
    case Type::bf16: return run<Type::bf16>(w, x, c, crs, ccs);
    case Type::f16: return run<Type::f16>(w, x, c, crs, ccs);
  }
}

}  // namespace bp::kernels::cpu
