// builtin:blocked: Backplane's own Cholesky, LU and triangular solves for
// float32 / float64, recursive so that almost all the work is a few large
// GEMMs on our own kernels (src/kernels/cpu/gemm.h), threaded by them.
//
// Note [Recursive factorizations]
// Each algorithm splits its matrix in halves until a block of at most
// kLeaf columns, which plain loops handle:
//   Cholesky  L11 = chol(A11); L21 = A21 L11^-T (a triangular solve);
//             A22 -= L21 L21^T (GEMM on the lower triangle, by halves);
//             L22 = chol(A22)
//   LU        (Toledo) factor the left half of the columns with pivoting,
//             swap the right half's rows alike, U12 = L11^-1 A12,
//             A22 -= L21 U12 (GEMM), factor A22, swap the left half's rows
//   solves    X_top first (lower) or X_bottom first (upper), then one GEMM
//             updates the other half of B
// Every matrix is a strided view, so an upper factor or a transposed solve
// is the same code on swapped strides. The GEMMs are C -= A B with the ISA
// the CPU capability cap and the fp32 precision permit: under "medium"
// (mkldnn.matmul fp32_precision "bf16") float32 updates use the AVX512_BF16
// kernel, under "highest" they stay fp32 (Note [fp32 precision tree]).
// Results follow LAPACK's conventions (ipiv 1-based, info as getrf/potrf),
// so the front end reads them alike.

#include <algorithm>
#include <cmath>

#include "backplane/dispatch_checks.h"
#include "kernels/cpu/gemm.h"
#include "ops/linalg/params.h"
#include "ops/sdpa/gemm_isa.h"

namespace bp::ops::linalg {
namespace {

using kernels::cpu::GemmIsa;
constexpr int64_t kLeaf = 32;

// A strided matrix view: element (i, j) at p[i * rs + j * cs].
template <class T>
struct View {
  T* p;
  int64_t rs, cs;
  T& operator()(int64_t i, int64_t j) const { return p[i * rs + j * cs]; }
  View block(int64_t i, int64_t j) const { return {p + i * rs + j * cs, rs, cs}; }
  View t() const { return {p, cs, rs}; }
};

// C (m x n) -= A (m x k) B (k x n).
template <class T>
void gemm_sub(GemmIsa isa, View<T> a, View<T> b, View<T> c, int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  if constexpr (std::is_same_v<T, float>)
    kernels::cpu::gemm_f32(isa, {a.p, m, k, a.rs, a.cs}, {b.p, k, n, b.rs, b.cs}, {c.p, m, n, c.rs, c.cs}, -1.0f,
                           1.0f);
  else
    kernels::cpu::gemm_f64(isa == GemmIsa::avx512_bf16 ? GemmIsa::avx512 : isa, {a.p, m, k, a.rs, a.cs},
                           {b.p, k, n, b.rs, b.cs}, {c.p, m, n, c.rs, c.cs}, -1.0, 1.0);
}

// ---------------------------------------------------------------- triangular solves

// op(T) X = B in place for a triangular n x n T: lower or upper, unit
// diagonal or not; B is n x cols.
template <class T>
void trsm(GemmIsa isa, View<T> t, bool lower, bool unit, View<T> b, int64_t n, int64_t cols) {
  if (n <= kLeaf) {
    for (int64_t c = 0; c < cols; ++c) {
      if (lower) {
        for (int64_t j = 0; j < n; ++j) {
          T x = b(j, c);
          if (!unit) b(j, c) = x = x / t(j, j);
          for (int64_t i = j + 1; i < n; ++i) b(i, c) -= t(i, j) * x;
        }
      } else {
        for (int64_t j = n - 1; j >= 0; --j) {
          T x = b(j, c);
          if (!unit) b(j, c) = x = x / t(j, j);
          for (int64_t i = 0; i < j; ++i) b(i, c) -= t(i, j) * x;
        }
      }
    }
    return;
  }
  const int64_t h = n / 2;
  if (lower) {
    trsm(isa, t, lower, unit, b, h, cols);
    gemm_sub(isa, t.block(h, 0), b, b.block(h, 0), n - h, cols, h);
    trsm(isa, t.block(h, h), lower, unit, b.block(h, 0), n - h, cols);
  } else {
    trsm(isa, t.block(h, h), lower, unit, b.block(h, 0), n - h, cols);
    gemm_sub(isa, t.block(0, h), b.block(h, 0), b, h, cols, n - h);
    trsm(isa, t, lower, unit, b, h, cols);
  }
}

// ---------------------------------------------------------------- Cholesky

// C (n x n, lower triangle) -= A A^T, A n x k: GEMMs on the off-diagonal
// halves, the diagonal blocks by recursion.
template <class T>
void syrk_lower(GemmIsa isa, View<T> a, View<T> c, int64_t n, int64_t k) {
  if (n <= kLeaf) {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l) {
        const T x = a(j, l);
        for (int64_t i = j; i < n; ++i) c(i, j) -= a(i, l) * x;
      }
    return;
  }
  const int64_t h = n / 2;
  syrk_lower(isa, a, c, h, k);
  gemm_sub(isa, a.block(h, 0), a.t(), c.block(h, 0), n - h, h, k);
  syrk_lower(isa, a.block(h, 0), c.block(h, h), n - h, k);
}

// The lower Cholesky factor in place; 0 or the order of the first leading
// minor that is not positive-definite (LAPACK's info).
template <class T>
int32_t potrf(GemmIsa isa, View<T> a, int64_t n) {
  if (n <= kLeaf) {
    for (int64_t j = 0; j < n; ++j) {
      T d = a(j, j);
      for (int64_t k = 0; k < j; ++k) d -= a(j, k) * a(j, k);
      if (!(d > 0)) return static_cast<int32_t>(j + 1);
      d = std::sqrt(d);
      a(j, j) = d;
      for (int64_t i = j + 1; i < n; ++i) {
        T s = a(i, j);
        for (int64_t k = 0; k < j; ++k) s -= a(i, k) * a(j, k);
        a(i, j) = s / d;
      }
    }
    return 0;
  }
  const int64_t h = n / 2;
  if (const int32_t info = potrf(isa, a, h)) return info;
  // L21 = A21 L11^-T, i.e. L11 L21^T = A21^T: a lower solve on transposed views.
  trsm(isa, a, true, false, a.block(h, 0).t(), h, n - h);
  syrk_lower(isa, a.block(h, 0), a.block(h, h), n - h, h);
  const int32_t info = potrf(isa, a.block(h, h), n - h);
  return info ? static_cast<int32_t>(info + h) : 0;
}

// ---------------------------------------------------------------- LU

// Swaps rows r and piv[r] - 1 (r in [from, to)) of the cols columns of b.
template <class T>
void swap_rows(View<T> b, int64_t cols, const int32_t* piv, int64_t from, int64_t to, bool reverse = false) {
  for (int64_t s = 0; s < to - from; ++s) {
    const int64_t r = reverse ? to - 1 - s : from + s;
    const int64_t q = piv[r] - 1;
    if (q == r) continue;
    for (int64_t c = 0; c < cols; ++c) std::swap(b(r, c), b(q, c));
  }
}

// LU with partial pivoting of the m x n view, in place; piv (1-based, rows
// of this view) and info as LAPACK's getrf.
template <class T>
int32_t getrf(GemmIsa isa, View<T> a, int64_t m, int64_t n, int32_t* piv) {
  const int64_t mn = std::min(m, n);
  if (n <= kLeaf || m <= 1) {
    int32_t info = 0;
    for (int64_t j = 0; j < mn; ++j) {
      int64_t p = j;
      T best = std::abs(a(j, j));
      for (int64_t i = j + 1; i < m; ++i)
        if (std::abs(a(i, j)) > best) best = std::abs(a(i, j)), p = i;
      piv[j] = static_cast<int32_t>(p + 1);
      if (a(p, j) != T(0)) {
        if (p != j)
          for (int64_t c = 0; c < n; ++c) std::swap(a(j, c), a(p, c));
        const T inv = T(1) / a(j, j);
        for (int64_t i = j + 1; i < m; ++i) a(i, j) *= inv;
      } else if (info == 0) {
        info = static_cast<int32_t>(j + 1);
      }
      for (int64_t c = j + 1; c < n; ++c) {
        const T x = a(j, c);
        for (int64_t i = j + 1; i < m; ++i) a(i, c) -= a(i, j) * x;
      }
    }
    return info;
  }
  const int64_t h = std::min(mn, n) / 2;
  int32_t info = getrf(isa, a, m, h, piv);
  swap_rows(a.block(0, h), n - h, piv, 0, h);
  trsm(isa, a, true, true, a.block(0, h), h, n - h);
  gemm_sub(isa, a.block(h, 0), a.block(0, h), a.block(h, h), m - h, n - h, h);
  const int32_t info2 = getrf(isa, a.block(h, h), m - h, n - h, piv + h);
  for (int64_t i = h; i < mn; ++i) piv[i] += static_cast<int32_t>(h);
  swap_rows(a, h, piv, h, mn);
  if (info == 0 && info2 != 0) info = static_cast<int32_t>(info2 + h);
  return info;
}

// A X = B (or A^T X = B) from getrf's L\U and piv.
template <class T>
void getrs(GemmIsa isa, View<T> lu, const int32_t* piv, View<T> b, int64_t n, int64_t k, bool transpose) {
  if (!transpose) {
    swap_rows(b, k, piv, 0, n);
    trsm(isa, lu, true, true, b, n, k);
    trsm(isa, lu, false, false, b, n, k);
  } else {  // A^T = U^T L^T P^T
    trsm(isa, lu.t(), true, false, b, n, k);
    trsm(isa, lu.t(), false, true, b, n, k);
    swap_rows(b, k, piv, 0, n, true);
  }
}

// ---------------------------------------------------------------- run

// The GEMM variant of the updates (Note [Recursive factorizations]).
GemmIsa update_isa(DType dtype) {
  const GemmIsa isa = sdpa::pick_gemm_isa();
  if (dtype == DType::f32 && isa == GemmIsa::avx512 && kernels::cpu::gemm_isa_supported(GemmIsa::avx512_bf16) &&
      precision::resolved(precision::Backend::mkldnn, precision::Op::matmul) == flags::Precision::bf16)
    return GemmIsa::avx512_bf16;
  return isa;
}

template <class T>
void run_typed(const Params& p) {
  const GemmIsa isa = update_isa(p.dtype);
  int32_t* info = p.info.defined() ? p.info.data_ptr<int32_t>() : nullptr;
  const int64_t mn = p.min_mn();
  for_each_matrix(p, [&](int64_t i) {
    // Column-major: rows stride 1, columns stride ld; an upper factor is the transposed view.
    View<T> a{matrix<T>(p.a, i), 1, ld(p.a)};
    View<T> b{p.b.defined() ? matrix<T>(p.b, i) : nullptr, 1, p.b.defined() ? ld(p.b) : 1};
    int32_t* piv = p.piv.defined() ? p.piv.data_ptr<int32_t>() + i * mn : nullptr;
    const View<T> factor = p.upper ? a.t() : a;  // L, for potrf / potrs
    switch (p.routine) {
      case Routine::potrf: info[i] = potrf(isa, factor, p.n); break;
      case Routine::potrs:
        trsm(isa, factor, true, false, b, p.n, p.k);
        trsm(isa, factor.t(), false, false, b, p.n, p.k);
        break;
      case Routine::getrf: {
        const int32_t r = getrf(isa, a, p.m, p.n, piv);
        if (info) info[i] = r;
        break;
      }
      case Routine::getrs: getrs(isa, a, piv, b, p.n, p.k, p.adjoint); break;
      case Routine::gesv:
      case Routine::inv: {
        const int32_t r = getrf(isa, a, p.n, p.n, piv);
        if (info) info[i] = r;
        getrs(isa, a, piv, b, p.n, p.k, false);
        break;
      }
      default: throw_bad_value("builtin:blocked", routine_name(p.routine), "potrf, potrs, getrf, getrs, gesv or inv");
    }
  });
  if (p.routine == Routine::potrf) zero_other_triangle(p);
}

void run(const Params& p) {
  load_inputs(p);
  if (p.dtype == DType::f32)
    run_typed<float>(p);
  else
    run_typed<double>(p);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_blocked() {
  dispatch::Properties props;
  props.reduced = dispatch::kBf16;
  props.workspace = "the GEMM kernels' packed panels";
  std::vector<dispatch::Check<Params>> list;
  list.push_back(routine_in({Routine::potrf, Routine::potrs, Routine::getrf, Routine::getrs, Routine::gesv,
                             Routine::inv}));
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64}));
  std::vector<flags::Id> reads = sdpa::gemm_isa_reads();
  for (flags::Id id : precision::path(precision::Backend::mkldnn, precision::Op::matmul)) reads.push_back(id);
  return std::make_unique<dispatch::Impl<Params>>("builtin:blocked", "cpu", props, std::move(list), run, reads);
}

}  // namespace bp::ops::linalg
