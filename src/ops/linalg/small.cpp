// builtin:blocked's tiny-matrix path (small.h).

// sqrt as the instruction: the path checks d > 0 first, so errno is never
// set, and a library call per pivot would cost as much as the rest.
#pragma GCC optimize("no-math-errno")

#include "ops/linalg/small.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/threads.h"
#include "kernels/cpu/linalg_lanes.h"
#include "ops/sdpa/gemm_isa.h"

namespace bp::ops::linalg {
namespace {

// a: N x N, column-major. Lower Cholesky factor in place; LAPACK's info.
template <class T, int N>
int32_t potrf_n(T* __restrict a) {
  for (int j = 0; j < N; ++j) {
    T d = a[j + j * N];
    for (int k = 0; k < j; ++k) d -= a[j + k * N] * a[j + k * N];
    if (!(d > 0)) return j + 1;
    d = std::sqrt(d);
    a[j + j * N] = d;
    const T inv = T(1) / d;
    for (int i = j + 1; i < N; ++i) {
      T s = a[i + j * N];
      for (int k = 0; k < j; ++k) s -= a[i + k * N] * a[j + k * N];
      a[i + j * N] = s * inv;
    }
  }
  return 0;
}

template <class T, int N>
int32_t getrf_n(T* __restrict a, int32_t* __restrict piv) {
  int32_t info = 0;
  for (int j = 0; j < N; ++j) {
    int p = j;
    T best = std::abs(a[j + j * N]);
    for (int i = j + 1; i < N; ++i) {  // branch-free: the pivot row is data, not control flow
      const T v = std::abs(a[i + j * N]);
      const bool larger = v > best;
      best = larger ? v : best;
      p = larger ? i : p;
    }
    piv[j] = p + 1;
    if (a[p + j * N] != T(0)) {
      if (p != j)
        for (int c = 0; c < N; ++c) std::swap(a[j + c * N], a[p + c * N]);
      const T inv = T(1) / a[j + j * N];
      for (int i = j + 1; i < N; ++i) a[i + j * N] *= inv;
    } else if (info == 0) {
      info = j + 1;
    }
    for (int c = j + 1; c < N; ++c)
      for (int i = j + 1; i < N; ++i) a[i + c * N] -= a[i + j * N] * a[j + c * N];
  }
  return info;
}

// One column x (N) = A^-1 x from getrf's output, in a local copy (registers).
template <class T, int N>
void solve_column(const T* __restrict lu, const int32_t* __restrict piv, T* __restrict out) {
  T x[N];
  for (int i = 0; i < N; ++i) x[i] = out[i];
  for (int i = 0; i < N; ++i) {
    const int q = piv[i] - 1;
    const T t = x[i];
    x[i] = x[q];
    x[q] = t;
  }
  for (int j = 0; j < N; ++j)
    for (int i = j + 1; i < N; ++i) x[i] -= lu[i + j * N] * x[j];
  for (int j = N - 1; j >= 0; --j) {
    x[j] /= lu[j + j * N];
    for (int i = 0; i < j; ++i) x[i] -= lu[i + j * N] * x[j];
  }
  for (int i = 0; i < N; ++i) out[i] = x[i];
}

// x (row i of column c: x[i][c]) = U^-1 L^-1 x for getrf's unit-lower L and
// upper U in `lu` (N x N, column-major) and rd[j] = 1 / U(j, j); the inner
// loops run across the N columns, so they vectorise. The triangular solves
// of both getrs_n and inverse_n.
template <class T, int N>
void solve_lu_block(const T* __restrict lu, const T* __restrict rd, T (&x)[N][N]) {
  for (int j = 0; j < N; ++j)
    for (int i = j + 1; i < N; ++i)
      for (int c = 0; c < N; ++c) x[i][c] -= lu[i + j * N] * x[j][c];
  for (int j = N - 1; j >= 0; --j) {
    for (int c = 0; c < N; ++c) x[j][c] *= rd[j];
    for (int i = 0; i < j; ++i)
      for (int c = 0; c < N; ++c) x[i][c] -= lu[i + j * N] * x[j][c];
  }
}

// B (N x k, column-major) = A^-1 B from getrf's output, N columns at a
// time in a row-major local block so the inner loops run across columns.
template <class T, int N>
void getrs_n(const T* __restrict lu, const int32_t* __restrict piv, T* __restrict b, int64_t k) {
  T rd[N];
  for (int j = 0; j < N; ++j) rd[j] = T(1) / lu[j + j * N];
  for (int64_t c0 = 0; c0 < k; c0 += N) {
    const int w = static_cast<int>(std::min<int64_t>(N, k - c0));
    T x[N][N];
    for (int c = 0; c < N; ++c)
      for (int i = 0; i < N; ++i) x[i][c] = c < w ? b[i + (c0 + c) * N] : T(0);
    if constexpr (N > 1) {  // a 1 x 1 factor has nothing to swap (and GCC cannot see that q is 0 there)
      for (int i = 0; i < N; ++i) {
        const int q = piv[i] - 1;
        if (q != i)
          for (int c = 0; c < N; ++c) std::swap(x[i][c], x[q][c]);
      }
    }
    solve_lu_block<T, N>(lu, rd, x);
    for (int c = 0; c < w; ++c)
      for (int i = 0; i < N; ++i) b[i + (c0 + c) * N] = x[i][c];
  }
}

// out (N x N, column-major) = A^-1 from getrf's output as LAPACK's getri
// does it: U^-1 L^-1 on the identity's columns all at once (the inner loops
// run across the N columns, so they vectorise), then P^T as column swaps.
template <class T, int N>
void inverse_n(const T* __restrict lu, const int32_t* __restrict piv, T* __restrict out) {
  T x[N][N];  // x[i][c]: row i of column c
  T rd[N];
  for (int j = 0; j < N; ++j) rd[j] = T(1) / lu[j + j * N];
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < N; ++c) x[i][c] = i == c ? T(1) : T(0);
  solve_lu_block<T, N>(lu, rd, x);
  int col[N];  // where each column of x lands after the swaps
  for (int c = 0; c < N; ++c) col[c] = c;
  for (int j = N - 1; j >= 0; --j) std::swap(col[j], col[piv[j] - 1]);
  for (int c = 0; c < N; ++c)
    for (int i = 0; i < N; ++i) out[i + c * N] = x[i][col[c]];
}

// Matrix i of the batch on the per-matrix code.
template <class T, int N>
void run_one(const Params& p, int64_t i) {
  T* ai = static_cast<T*>(p.a.data()) + i * N * N;
  T* bi = p.b.defined() ? static_cast<T*>(p.b.data()) + i * N * p.k : nullptr;
  int32_t* piv = p.piv.defined() ? p.piv.data_ptr<int32_t>() + i * N : nullptr;
  int32_t* info = p.info.defined() ? p.info.data_ptr<int32_t>() + i : nullptr;
  switch (p.routine) {
    case Routine::potrf: *info = potrf_n<T, N>(ai); break;
    case Routine::getrf: *info = getrf_n<T, N>(ai, piv); break;
    case Routine::getrs: getrs_n<T, N>(ai, piv, bi, p.k); break;
    case Routine::inv: {  // b = I: A^-1 column by column, the size known
      *info = getrf_n<T, N>(ai, piv);
      inverse_n<T, N>(ai, piv, bi);
      break;
    }
    default: {  // gesv
      const int32_t f = getrf_n<T, N>(ai, piv);
      if (info) *info = f;
      getrs_n<T, N>(ai, piv, bi, p.k);
      break;
    }
  }
}

kernels::cpu::LanesOp lanes_op(Routine r) {
  using kernels::cpu::LanesOp;
  switch (r) {
    case Routine::potrf: return LanesOp::potrf;
    case Routine::getrf: return LanesOp::getrf;
    case Routine::getrs: return LanesOp::getrs;
    case Routine::inv: return LanesOp::inv;
    default: return LanesOp::gesv;
  }
}

// The batch in chunks (the threads' shares): up to kLanesMaxN, groups of
// matrices across the vector lanes (Note [Pivoting across lanes]) and the
// chunk's last few matrices one by one; above it, every matrix one by one.
template <class T, int N>
void run_n(const Params& p, kernels::cpu::GemmIsa isa, bool a_in_place) {
  const bool lanes = N <= kernels::cpu::kLanesMaxN;
  const T* rows = a_in_place ? static_cast<const T*>(p.a_in.data()) : nullptr;
  const int64_t chunk = 64 * kernels::cpu::lanes_width(isa, sizeof(T));
  const int64_t chunks = (p.batch + chunk - 1) / chunk;
  const int team = threads::team_size(p.batch / 256 + 1);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * chunk, end = std::min(p.batch, begin + chunk);
    int64_t done = 0;
    if (lanes) {
      kernels::cpu::LanesBatch g;
      g.op = lanes_op(p.routine);
      g.n = N;
      g.k = p.k;
      g.count = end - begin;
      g.a = static_cast<T*>(p.a.data()) + begin * N * N;
      if (p.b.defined()) g.b = static_cast<T*>(p.b.data()) + begin * N * p.k;
      if (p.piv.defined()) g.piv = p.piv.data_ptr<int32_t>() + begin * N;
      if (p.info.defined()) g.info = p.info.data_ptr<int32_t>() + begin;
      if (p.det.defined()) g.det = static_cast<T*>(p.det.data()) + begin;
      if (rows) g.a_rows = rows + begin * N * N;
      done = std::is_same_v<T, float> ? kernels::cpu::lanes_run_f32(isa, g) : kernels::cpu::lanes_run_f64(isa, g);
    }
    for (int64_t i = begin + done; i < end; ++i) {
      if (rows) {  // the lanes left this one: its transpose into a
        T* ai = static_cast<T*>(p.a.data()) + i * N * N;
        for (int r = 0; r < N; ++r)
          for (int c = 0; c < N; ++c) ai[r + c * N] = rows[i * N * N + r * N + c];
      }
      run_one<T, N>(p, i);
      if (p.det.defined() && p.routine == Routine::getrf) {  // as the lanes (and linalg.det's loop) multiply
        const T* ai = static_cast<const T*>(p.a.data()) + i * N * N;
        const int32_t* pv = p.piv.data_ptr<int32_t>() + i * N;
        T d(1);
        for (int j = 0; j < N; ++j) d *= ai[j + j * N] * (pv[j] == j + 1 ? T(1) : T(-1));
        static_cast<T*>(p.det.data())[i] = d;
      }
    }
  }
}

template <class T>
bool run_typed(const Params& p, kernels::cpu::GemmIsa isa, bool a_in_place) {
  switch (p.n) {
    case 1: run_n<T, 1>(p, isa, a_in_place); return true;
    case 2: run_n<T, 2>(p, isa, a_in_place); return true;
    case 3: run_n<T, 3>(p, isa, a_in_place); return true;
    case 4: run_n<T, 4>(p, isa, a_in_place); return true;
    case 5: run_n<T, 5>(p, isa, a_in_place); return true;
    case 6: run_n<T, 6>(p, isa, a_in_place); return true;
    case 7: run_n<T, 7>(p, isa, a_in_place); return true;
    case 8: run_n<T, 8>(p, isa, a_in_place); return true;
    case 9: run_n<T, 9>(p, isa, a_in_place); return true;
    case 10: run_n<T, 10>(p, isa, a_in_place); return true;
    case 11: run_n<T, 11>(p, isa, a_in_place); return true;
    case 12: run_n<T, 12>(p, isa, a_in_place); return true;
    case 13: run_n<T, 13>(p, isa, a_in_place); return true;
    case 14: run_n<T, 14>(p, isa, a_in_place); return true;
    case 15: run_n<T, 15>(p, isa, a_in_place); return true;
    case 16: run_n<T, 16>(p, isa, a_in_place); return true;
    default: return false;
  }
}

}  // namespace

bool run_small(const Params& p) {
  const bool routine_ok = (p.routine == Routine::potrf && !p.upper) || p.routine == Routine::getrf ||
                          (p.routine == Routine::getrs && !p.adjoint) || p.routine == Routine::gesv ||
                          p.routine == Routine::inv;  // A^H X = B goes the blocked way (getrs_n solves A X = B)
  if (!routine_ok || p.m != p.n || p.n > kSmallN || p.n < 1) return false;
  if (p.dtype != DType::f32 && p.dtype != DType::f64) return false;
  // The lanes read a dense A where it lies (its transposing copy would cost
  // a third of a 4 x 4 inverse), and both paths write inv's b whole, so it
  // needs no identity first.
  const bool a_in_place = p.n <= kernels::cpu::kLanesMaxN && !p.a_row_major && p.a_in.defined() &&
                          p.a_in.device().is_cpu() && p.a_in.is_contiguous();
  load_inputs(p, !a_in_place, false);
  const kernels::cpu::GemmIsa isa = sdpa::pick_gemm_isa();  // capped by ATEN_CPU_CAPABILITY
  if (p.dtype == DType::f32)
    run_typed<float>(p, isa, a_in_place);
  else
    run_typed<double>(p, isa, a_in_place);
  p.det_written = p.det.defined() && p.routine == Routine::getrf;
  return true;
}

}  // namespace bp::ops::linalg
