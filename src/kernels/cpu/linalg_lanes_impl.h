#pragma once
// The lane-wise small-matrix routines (linalg_lanes.h), written once over
// GCC vector types of `Bytes` bytes; each ISA's file includes this with its
// own flags and width. Every lane follows, operation for operation, the
// per-matrix code of src/ops/linalg/small.cpp (the same pivot choice, the
// same reciprocals, the same order of the updates), so results agree with
// it up to FMA contraction, and pivots and infos agree exactly.
//
// Note [Pivoting across lanes]
// Partial pivoting picks, per lane, the first row of largest |a(i, j)|
// (i >= j; "larger" is a strict >, so a NaN is never chosen over a number,
// as LAPACK's i?amax does it). The pivot row p is a vector of row numbers;
// swapping rows j and p is, for each later row r, a blend where p == r, so
// no lane branches. A zero pivot leaves the column unscaled and records the
// first such j + 1 as info, as getrf does. Cholesky keeps a mask of lanes
// still factoring: a lane whose leading minor fails stops changing there
// (its later columns keep their input values, as potrf leaves them) and its
// info is that order.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/linalg_lanes.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace bp::kernels::cpu::detail {

template <class T, int Bytes>
struct LanesOf {
  using V [[gnu::vector_size(Bytes)]] = T;
  static constexpr int W = Bytes / static_cast<int>(sizeof(T));
};

template <class V, class T>
inline V splat(T x) {
  return V{} + x;
}

template <class V>
inline V vabs(V v) {
  return v < 0 ? -v : v;
}

// Square root per lane: the instruction where the ISA has one (the callers
// only take square roots they keep of positive numbers, so errno is moot).
template <class V>
inline V vsqrt(V v) {
  using T = std::remove_reference_t<decltype(v[0])>;
#if defined(__AVX__)
  if constexpr (sizeof(V) == 32 && sizeof(T) == 4) return reinterpret_cast<V>(_mm256_sqrt_ps(reinterpret_cast<__m256>(v)));
  if constexpr (sizeof(V) == 32 && sizeof(T) == 8) return reinterpret_cast<V>(_mm256_sqrt_pd(reinterpret_cast<__m256d>(v)));
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(V) == 16 && sizeof(T) == 4) return reinterpret_cast<V>(_mm_sqrt_ps(reinterpret_cast<__m128>(v)));
  if constexpr (sizeof(V) == 16 && sizeof(T) == 8) return reinterpret_cast<V>(_mm_sqrt_pd(reinterpret_cast<__m128d>(v)));
#endif
  V r = v;
  for (int l = 0; l < static_cast<int>(sizeof(V) / sizeof(T)); ++l) r[l] = std::sqrt(v[l]);
  return r;
}

// r[0..W-1] = the W x W block whose row l is r[l], transposed in
// registers; false where this ISA has no such shuffle (the caller then
// moves the elements one by one).
template <class V>
inline bool transpose_block(V* r) {
  using T = std::remove_reference_t<decltype(r[0][0])>;
#if defined(__AVX__)
  if constexpr (sizeof(V) == 32 && sizeof(T) == 4) {
    __m256 x[8], y[8];
    for (int i = 0; i < 8; i += 2) {
      x[i] = _mm256_unpacklo_ps(reinterpret_cast<__m256>(r[i]), reinterpret_cast<__m256>(r[i + 1]));
      x[i + 1] = _mm256_unpackhi_ps(reinterpret_cast<__m256>(r[i]), reinterpret_cast<__m256>(r[i + 1]));
    }
    for (int i = 0; i < 8; i += 4) {
      y[i] = _mm256_shuffle_ps(x[i], x[i + 2], 0x44);
      y[i + 1] = _mm256_shuffle_ps(x[i], x[i + 2], 0xEE);
      y[i + 2] = _mm256_shuffle_ps(x[i + 1], x[i + 3], 0x44);
      y[i + 3] = _mm256_shuffle_ps(x[i + 1], x[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; ++i) {
      r[i] = reinterpret_cast<V>(_mm256_permute2f128_ps(y[i], y[i + 4], 0x20));
      r[i + 4] = reinterpret_cast<V>(_mm256_permute2f128_ps(y[i], y[i + 4], 0x31));
    }
    return true;
  }
  if constexpr (sizeof(V) == 32 && sizeof(T) == 8) {
    const __m256d a = reinterpret_cast<__m256d>(r[0]), b = reinterpret_cast<__m256d>(r[1]);
    const __m256d c = reinterpret_cast<__m256d>(r[2]), d = reinterpret_cast<__m256d>(r[3]);
    const __m256d ab0 = _mm256_unpacklo_pd(a, b), ab1 = _mm256_unpackhi_pd(a, b);
    const __m256d cd0 = _mm256_unpacklo_pd(c, d), cd1 = _mm256_unpackhi_pd(c, d);
    r[0] = reinterpret_cast<V>(_mm256_permute2f128_pd(ab0, cd0, 0x20));
    r[1] = reinterpret_cast<V>(_mm256_permute2f128_pd(ab1, cd1, 0x20));
    r[2] = reinterpret_cast<V>(_mm256_permute2f128_pd(ab0, cd0, 0x31));
    r[3] = reinterpret_cast<V>(_mm256_permute2f128_pd(ab1, cd1, 0x31));
    return true;
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(V) == 16 && sizeof(T) == 4) {
    __m128 a = reinterpret_cast<__m128>(r[0]), b = reinterpret_cast<__m128>(r[1]);
    __m128 c = reinterpret_cast<__m128>(r[2]), d = reinterpret_cast<__m128>(r[3]);
    _MM_TRANSPOSE4_PS(a, b, c, d);
    r[0] = reinterpret_cast<V>(a), r[1] = reinterpret_cast<V>(b), r[2] = reinterpret_cast<V>(c);
    r[3] = reinterpret_cast<V>(d);
    return true;
  }
  if constexpr (sizeof(V) == 16 && sizeof(T) == 8) {
    const __m128d a = reinterpret_cast<__m128d>(r[0]), b = reinterpret_cast<__m128d>(r[1]);
    r[0] = reinterpret_cast<V>(_mm_unpacklo_pd(a, b));
    r[1] = reinterpret_cast<V>(_mm_unpackhi_pd(a, b));
    return true;
  }
#endif
  return false;
}

// Elements [0, count) of W matrices `stride` elements apart <-> lane l of
// v[e] = element e of matrix l: whole blocks of W elements by a register
// transpose, the rest one by one.
template <class V, class T, int W>
inline void load_group(const T* src, int64_t stride, int count, V* v) {
  int e0 = 0;
  for (; e0 + W <= count; e0 += W) {
    V r[W];
    for (int l = 0; l < W; ++l) std::memcpy(&r[l], src + l * stride + e0, sizeof(V));
    if (!transpose_block(r)) break;
    for (int k = 0; k < W; ++k) v[e0 + k] = r[k];
  }
  for (int e = e0; e < count; ++e)
    for (int l = 0; l < W; ++l) v[e][l] = src[l * stride + e];
}

template <class V, class T, int W>
inline void store_group(const V* v, int count, T* dst, int64_t stride) {
  int e0 = 0;
  for (; e0 + W <= count; e0 += W) {
    V r[W];
    for (int k = 0; k < W; ++k) r[k] = v[e0 + k];
    if (!transpose_block(r)) break;
    for (int l = 0; l < W; ++l) std::memcpy(dst + l * stride + e0, &r[l], sizeof(V));
  }
  for (int e = e0; e < count; ++e)
    for (int l = 0; l < W; ++l) dst[l * stride + e] = v[e][l];
}

template <class V, class T, int W, int E>
inline void load_group(const T* src, int64_t stride, V (&v)[E]) {
  load_group<V, T, W>(src, stride, E, v);
}

template <class V, class T, int W, int E>
inline void store_group(const V (&v)[E], T* dst, int64_t stride) {
  store_group<V, T, W>(v, E, dst, stride);
}

// Lane-wise getrf of a (N x N, column-major): pivot rows (0-based, as T) in
// pv, info (0 or j + 1, as T) returned.
template <class V, class T, int N>
inline V getrf_lanes(V (&a)[N * N], V (&pv)[N]) {
  V info{};
  for (int j = 0; j < N; ++j) {
    V best = vabs(a[j + j * N]);
    V p = splat<V>(T(j));
    for (int i = j + 1; i < N; ++i) {
      const V v = vabs(a[i + j * N]);
      const auto larger = v > best;
      best = larger ? v : best;
      p = larger ? splat<V>(T(i)) : p;
    }
    pv[j] = p;
    for (int c = 0; c < N; ++c) {  // rows j and p swap in every column
      V from_p = a[j + c * N];
      for (int r = j + 1; r < N; ++r) from_p = p == T(r) ? a[r + c * N] : from_p;
      for (int r = j + 1; r < N; ++r) a[r + c * N] = p == T(r) ? a[j + c * N] : a[r + c * N];
      a[j + c * N] = from_p;
    }
    const auto zero = a[j + j * N] == T(0);
    const V inv = T(1) / a[j + j * N];
    for (int i = j + 1; i < N; ++i) a[i + j * N] = zero ? a[i + j * N] : a[i + j * N] * inv;
    info = (zero & (info == T(0))) ? splat<V>(T(j + 1)) : info;
    for (int c = j + 1; c < N; ++c)
      for (int i = j + 1; i < N; ++i) a[i + c * N] -= a[i + j * N] * a[j + c * N];
  }
  return info;
}

// x = P x: the swaps of pv, in order (row i with row pv[i] >= i).
template <class V, class T, int N>
inline void permute_lanes(const V (&pv)[N], V (&x)[N]) {
  for (int i = 0; i < N; ++i) {
    V from_p = x[i];
    for (int r = i + 1; r < N; ++r) from_p = pv[i] == T(r) ? x[r] : from_p;
    for (int r = i + 1; r < N; ++r) x[r] = pv[i] == T(r) ? x[i] : x[r];
    x[i] = from_p;
  }
}

// x = U^-1 L^-1 x (one column) for getrf's L\U in lu and rd = 1 / diag(U).
template <class V, int N>
inline void solve_lu_lanes(const V (&lu)[N * N], const V (&rd)[N], V (&x)[N]) {
  for (int j = 0; j < N; ++j)
    for (int i = j + 1; i < N; ++i) x[i] -= lu[i + j * N] * x[j];
  for (int j = N - 1; j >= 0; --j) {
    x[j] *= rd[j];
    for (int i = 0; i < j; ++i) x[i] -= lu[i + j * N] * x[j];
  }
}

// Lane-wise lower potrf; info (0 or the failing order, as T) returned.
template <class V, class T, int N>
inline V potrf_lanes(V (&a)[N * N]) {
  V info{};
  auto alive = V{} == T(0);  // every lane still factoring
  for (int j = 0; j < N; ++j) {
    V d = a[j + j * N];
    for (int k = 0; k < j; ++k) d -= a[j + k * N] * a[j + k * N];
    const auto ok = d > T(0);
    info = (alive & ~ok) ? splat<V>(T(j + 1)) : info;
    alive &= ok;
    const V s = vsqrt(alive ? d : splat<V>(T(1)));
    a[j + j * N] = alive ? s : a[j + j * N];
    const V inv = T(1) / s;
    for (int i = j + 1; i < N; ++i) {
      V t = a[i + j * N];
      for (int k = 0; k < j; ++k) t -= a[i + k * N] * a[j + k * N];
      a[i + j * N] = alive ? t * inv : a[i + j * N];
    }
  }
  return info;
}

template <class V, class T, int W, int N>
inline void write_ints(const V (&v)[N], int32_t add, int32_t* out) {
  for (int l = 0; l < W; ++l)
    for (int j = 0; j < N; ++j) out[l * N + j] = static_cast<int32_t>(v[j][l]) + add;
}

template <class V, class T, int W, int N>
inline void read_pivots(const int32_t* in, V (&pv)[N]) {
  for (int j = 0; j < N; ++j)
    for (int l = 0; l < W; ++l) pv[j][l] = static_cast<T>(in[l * N + j] - 1);
}

// B's columns, kCols at a time (their elements are consecutive, so the
// loads and stores transpose whole blocks): permuted, then solved.
template <class V, class T, int W, int N>
inline void getrs_group(const V (&lu)[N * N], const V (&pv)[N], T* b, int64_t k) {
  constexpr int kCols = (2 * W + N - 1) / N;
  V rd[N];
  for (int j = 0; j < N; ++j) rd[j] = T(1) / lu[j + j * N];
  for (int64_t c0 = 0; c0 < k; c0 += kCols) {
    const int cols = static_cast<int>(std::min<int64_t>(kCols, k - c0));
    V x[kCols][N];
    load_group<V, T, W>(b + c0 * N, N * k, cols * N, &x[0][0]);
    for (int c = 0; c < cols; ++c) {
      if constexpr (N > 1) permute_lanes<V, T, N>(pv, x[c]);
      solve_lu_lanes<V, N>(lu, rd, x[c]);
    }
    store_group<V, T, W>(&x[0][0], cols * N, b + c0 * N, N * k);
  }
}

// out = A^-1 from getrf's output: U^-1 L^-1 on the identity's columns, then
// the column swaps of P^T in reverse order (as inverse_n in small.cpp).
template <class V, class T, int W, int N>
inline void inverse_group(const V (&lu)[N * N], const V (&pv)[N], T* out) {
  V rd[N];
  for (int j = 0; j < N; ++j) rd[j] = T(1) / lu[j + j * N];
  V x[N * N];  // x[i + c * N]
  for (int c = 0; c < N; ++c) {
    V col[N];
    for (int i = 0; i < N; ++i) col[i] = splat<V>(T(i == c ? 1 : 0));
    solve_lu_lanes<V, N>(lu, rd, col);
    for (int i = 0; i < N; ++i) x[i + c * N] = col[i];
  }
  for (int j = N - 1; j >= 0; --j)  // columns j and pv[j] (>= j) swap
    for (int i = 0; i < N; ++i) {
      V from_p = x[i + j * N];
      for (int r = j + 1; r < N; ++r) from_p = pv[j] == T(r) ? x[i + r * N] : from_p;
      for (int r = j + 1; r < N; ++r) x[i + r * N] = pv[j] == T(r) ? x[i + j * N] : x[i + r * N];
      x[i + j * N] = from_p;
    }
  store_group<V, T, W, N * N>(x, out, N * N);
}

template <class V, class T, int W, int N>
void run_group(const LanesBatch& bt, int64_t first) {
  T* a = static_cast<T*>(bt.a) + first * N * N;
  T* b = bt.b ? static_cast<T*>(bt.b) + first * N * bt.k : nullptr;
  int32_t* piv = bt.piv ? bt.piv + first * N : nullptr;
  int32_t* info = bt.info ? bt.info + first : nullptr;
  V m[N * N];
  V pv[N] = {};  // filled by getrf or read_pivots; potrf leaves it unread
  if (bt.a_rows) {  // row-major: element (i, j) at i * N + j; renaming the registers transposes
    V rows[N * N];
    load_group<V, T, W, N * N>(static_cast<const T*>(bt.a_rows) + first * N * N, N * N, rows);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) m[i + j * N] = rows[i * N + j];
  } else {
    load_group<V, T, W, N * N>(a, N * N, m);
  }
  V status{};
  switch (bt.op) {
    case LanesOp::potrf: status = potrf_lanes<V, T, N>(m); break;
    case LanesOp::getrs: read_pivots<V, T, W, N>(piv, pv); break;
    default: status = getrf_lanes<V, T, N>(m, pv); break;
  }
  if (bt.op != LanesOp::getrs) store_group<V, T, W, N * N>(m, a, N * N);
  if (bt.op != LanesOp::potrf && bt.op != LanesOp::getrs) write_ints<V, T, W, N>(pv, 1, piv);
  if (info && bt.op != LanesOp::getrs)
    for (int l = 0; l < W; ++l) info[l] = static_cast<int32_t>(status[l]);
  if (bt.det && bt.op == LanesOp::getrf) {  // in the order linalg.det's own loop multiplies
    V d = splat<V>(T(1));
    for (int j = 0; j < N; ++j) d *= m[j + j * N] * (pv[j] == T(j) ? splat<V>(T(1)) : splat<V>(T(-1)));
    std::memcpy(static_cast<T*>(bt.det) + first, &d, sizeof d);
  }
  if (bt.op == LanesOp::getrs || bt.op == LanesOp::gesv) getrs_group<V, T, W, N>(m, pv, b, bt.k);
  if (bt.op == LanesOp::inv) inverse_group<V, T, W, N>(m, pv, b);
}

template <class T, int Bytes, int N>
int64_t run_sized(const LanesBatch& bt) {
  using L = LanesOf<T, Bytes>;
  const int64_t done = bt.count - bt.count % L::W;
  for (int64_t first = 0; first < done; first += L::W) run_group<typename L::V, T, L::W, N>(bt, first);
  return done;
}

template <class T, int Bytes>
int64_t lanes_run(const LanesBatch& bt) {
  switch (bt.n) {
    case 1: return run_sized<T, Bytes, 1>(bt);
    case 2: return run_sized<T, Bytes, 2>(bt);
    case 3: return run_sized<T, Bytes, 3>(bt);
    case 4: return run_sized<T, Bytes, 4>(bt);
    case 5: return run_sized<T, Bytes, 5>(bt);
    case 6: return run_sized<T, Bytes, 6>(bt);
    case 7: return run_sized<T, Bytes, 7>(bt);
    case 8: return run_sized<T, Bytes, 8>(bt);
    default: return 0;
  }
}

}  // namespace bp::kernels::cpu::detail
