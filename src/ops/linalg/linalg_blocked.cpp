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
#include <vector>

#include "backplane/dispatch_checks.h"
#include "kernels/cpu/gemm.h"
#include "ops/linalg/params.h"
#include "ops/linalg/small.h"
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

// C (m x n) = alpha A (m x k) B (k x n) + beta C.
template <class T>
void gemm(GemmIsa isa, View<T> a, View<T> b, View<T> c, int64_t m, int64_t n, int64_t k, T alpha, T beta) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  if constexpr (std::is_same_v<T, float>)
    kernels::cpu::gemm_f32(isa, {a.p, m, k, a.rs, a.cs}, {b.p, k, n, b.rs, b.cs}, {c.p, m, n, c.rs, c.cs}, alpha,
                           beta);
  else
    kernels::cpu::gemm_f64(isa == GemmIsa::avx512_bf16 ? GemmIsa::avx512 : isa, {a.p, m, k, a.rs, a.cs},
                           {b.p, k, n, b.rs, b.cs}, {c.p, m, n, c.rs, c.cs}, alpha, beta);
}

// C (m x n) -= A (m x k) B (k x n).
template <class T>
void gemm_sub(GemmIsa isa, View<T> a, View<T> b, View<T> c, int64_t m, int64_t n, int64_t k) {
  gemm(isa, a, b, c, m, n, k, T(-1), T(1));
}

// ---------------------------------------------------------------- triangular solves

// The leaf of trsm, for B stored by columns (b.rs == 1, as every caller's
// B is). T stored by columns (t.rs == 1) is solved column by column (axpy
// form); T stored by rows (a transposed view, t.cs == 1) row by row (dot
// form), so the inner loops are unit-stride either way and vectorise.
template <class T>
void trsm_leaf(View<T> t, bool lower, bool unit, View<T> b, int64_t n, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) {
    T* __restrict x = b.p + c * b.cs;
    if (t.rs == 1) {
      for (int64_t s = 0; s < n; ++s) {
        const int64_t j = lower ? s : n - 1 - s;
        const T* __restrict col = t.p + j * t.cs;
        if (!unit) x[j] /= col[j];
        const T v = x[j];
        if (lower)
          for (int64_t i = j + 1; i < n; ++i) x[i] -= col[i] * v;
        else
          for (int64_t i = 0; i < j; ++i) x[i] -= col[i] * v;
      }
    } else {  // row i of T is unit-stride
      for (int64_t s = 0; s < n; ++s) {
        const int64_t i = lower ? s : n - 1 - s;
        const T* __restrict row = t.p + i * t.rs;
        T sum = 0;
        if (lower)
          for (int64_t j = 0; j < i; ++j) sum += row[j * t.cs] * x[j];
        else
          for (int64_t j = i + 1; j < n; ++j) sum += row[j * t.cs] * x[j];
        x[i] -= sum;
        if (!unit) x[i] /= row[i * t.cs];
      }
    }
  }
}

// The leaf for many right-hand sides: the n x n triangle inverted by the
// loop leaf (on the identity), then one GEMM applies it to B, so the
// O(n^2 cols) work runs on the GEMM kernel instead of short loops.
template <class T>
void trsm_leaf_by_inverse(GemmIsa isa, View<T> t, bool lower, bool unit, View<T> b, int64_t n, int64_t cols) {
  thread_local std::vector<T> inverse, product;
  inverse.assign(static_cast<std::size_t>(n * n), T(0));
  for (int64_t i = 0; i < n; ++i) inverse[i + i * n] = T(1);
  trsm_leaf(t, lower, unit, View<T>{inverse.data(), 1, n}, n, n);
  product.resize(static_cast<std::size_t>(n * cols));
  const View<T> out{product.data(), 1, n};
  gemm(isa, View<T>{inverse.data(), 1, n}, b, out, n, cols, n, T(1), T(0));
  for (int64_t c = 0; c < cols; ++c) std::copy(product.data() + c * n, product.data() + (c + 1) * n, b.p + c * b.cs);
}

// op(T) X = B in place for a triangular n x n T: lower or upper, unit
// diagonal or not; B is n x cols, stored by columns.
template <class T>
void trsm(GemmIsa isa, View<T> t, bool lower, bool unit, View<T> b, int64_t n, int64_t cols) {
  if (n <= kLeaf)
    return cols >= 4 * kLeaf ? trsm_leaf_by_inverse(isa, t, lower, unit, b, n, cols)
                             : trsm_leaf(t, lower, unit, b, n, cols);
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

// X L^T = B in place for a lower n x n L stored by columns, B rows x n
// stored by columns (Cholesky's panel: L21 = A21 L11^-T).
template <class T>
void trsm_right_lower_t(GemmIsa isa, View<T> l, View<T> b, int64_t rows, int64_t n) {
  if (n <= kLeaf) {
    for (int64_t j = 0; j < n; ++j) {
      T* __restrict xj = b.p + j * b.cs;
      for (int64_t k = 0; k < j; ++k) {
        const T f = l(j, k);
        const T* __restrict xk = b.p + k * b.cs;
        for (int64_t i = 0; i < rows; ++i) xj[i] -= xk[i] * f;
      }
      const T d = T(1) / l(j, j);
      for (int64_t i = 0; i < rows; ++i) xj[i] *= d;
    }
    return;
  }
  const int64_t h = n / 2;
  trsm_right_lower_t(isa, l, b, rows, h);
  gemm_sub(isa, b, l.block(h, 0).t(), b.block(0, h), rows, n - h, h);
  trsm_right_lower_t(isa, l.block(h, h), b.block(0, h), rows, n - h);
}

// ---------------------------------------------------------------- Cholesky

// C (n x n, lower triangle) -= A A^T, A n x k: GEMMs on the off-diagonal
// halves, the diagonal blocks by recursion.
template <class T>
void syrk_lower(GemmIsa isa, View<T> a, View<T> c, int64_t n, int64_t k) {
  if (n <= 4 * kLeaf) {
    // The whole square: its strict upper triangle is scratch that no step
    // reads (zero_other_triangle clears it), and one GEMM beats short loops.
    return gemm_sub(isa, a, a.t(), c, n, n, k);
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
  // L21 = A21 L11^-T.
  if (a.rs == 1)
    trsm_right_lower_t(isa, a, a.block(h, 0), n - h, h);
  else  // an upper factor's transposed view: L11 L21^T = A21^T, whose columns are unit-stride there
    trsm(isa, a, true, false, a.block(h, 0).t(), h, n - h);
  syrk_lower(isa, a.block(h, 0), a.block(h, h), n - h, h);
  const int32_t info = potrf(isa, a.block(h, h), n - h);
  return info ? static_cast<int32_t>(info + h) : 0;
}

// ---------------------------------------------------------------- LU

// Swaps rows r and piv[r] - 1 (r in [from, to)) of the cols columns of b.
// Columns are taken 32 at a time (LAPACK's laswp blocking): every swap of a
// chunk then hits the same few cache lines, where a whole row at a time
// would touch one line per column for each swap.
template <class T>
void swap_rows(View<T> b, int64_t cols, const int32_t* piv, int64_t from, int64_t to, bool reverse = false) {
  constexpr int64_t kChunk = 32;
  for (int64_t c0 = 0; c0 < cols; c0 += kChunk) {
    const int64_t c1 = std::min(cols, c0 + kChunk);
    for (int64_t s = 0; s < to - from; ++s) {
      const int64_t r = reverse ? to - 1 - s : from + s;
      const int64_t q = piv[r] - 1;
      if (q == r) continue;
      for (int64_t c = c0; c < c1; ++c) std::swap(b(r, c), b(q, c));
    }
  }
}

// LU with partial pivoting of the m x n view, in place; piv (1-based, rows
// of this view) and info as LAPACK's getrf.
template <class T>
int32_t getrf(GemmIsa isa, View<T> a, int64_t m, int64_t n, int32_t* piv) {
  const int64_t mn = std::min(m, n);
  if (n <= kLeaf || m <= 1) {  // a is stored by columns here (rs == 1): unit-stride inner loops
    int32_t info = 0;
    auto col = [&](int64_t j) { return a.p + j * a.cs; };
    for (int64_t j = 0; j < mn; ++j) {
      T* __restrict cj = col(j);
      int64_t p = j;
      T best = std::abs(cj[j]);
      for (int64_t i = j + 1; i < m; ++i)
        if (std::abs(cj[i]) > best) best = std::abs(cj[i]), p = i;
      piv[j] = static_cast<int32_t>(p + 1);
      if (cj[p] != T(0)) {
        if (p != j)
          for (int64_t c = 0; c < n; ++c) std::swap(col(c)[j], col(c)[p]);
        const T inv = T(1) / cj[j];
        for (int64_t i = j + 1; i < m; ++i) cj[i] *= inv;
      } else if (info == 0) {
        info = static_cast<int32_t>(j + 1);
      }
      for (int64_t c = j + 1; c < n; ++c) {
        T* __restrict cc = col(c);
        const T x = cc[j];
        for (int64_t i = j + 1; i < m; ++i) cc[i] -= cj[i] * x;
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

// X = L^-1 for the unit lower triangle of l, with X holding the identity on
// entry: the inverse's zero upper triangle is never touched, so this costs
// n^3 / 3 instead of a full solve's n^3 (X11 = L11^-1, X21 = -L22^-1 L21 X11,
// X22 = L22^-1).
template <class T>
void inverse_unit_lower(GemmIsa isa, View<T> l, View<T> x, int64_t n) {
  if (n <= kLeaf) return trsm_leaf(l, true, true, x, n, n);
  const int64_t h = n / 2;
  inverse_unit_lower(isa, l, x, h);
  gemm(isa, l.block(h, 0), x, x.block(h, 0), n - h, h, h, T(-1), T(0));
  trsm(isa, l.block(h, h), true, true, x.block(h, 0), n - h, h);
  inverse_unit_lower(isa, l.block(h, h), x.block(h, h), n - h);
}

// A^-1 = U^-1 L^-1 P^T from getrf's output, into x (the identity on entry),
// as LAPACK's getri: 2 n^3 in all with the factorization, where solving
// A X = I costs 8/3 n^3.
template <class T>
void inverse_from_lu(GemmIsa isa, View<T> lu, const int32_t* piv, View<T> x, int64_t n) {
  inverse_unit_lower(isa, lu, x, n);
  trsm(isa, lu, false, false, x, n, n);
  for (int64_t j = n - 1; j >= 0; --j) {  // X P^T: the row swaps, as column swaps in reverse
    const int64_t q = piv[j] - 1;
    if (q != j) std::swap_ranges(x.p + j * x.cs, x.p + j * x.cs + n, x.p + q * x.cs);
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
      case Routine::gesv: {
        const int32_t r = getrf(isa, a, p.n, p.n, piv);
        if (info) info[i] = r;
        getrs(isa, a, piv, b, p.n, p.k, false);
        break;
      }
      case Routine::inv: {
        const int32_t r = getrf(isa, a, p.n, p.n, piv);
        if (info) info[i] = r;
        inverse_from_lu(isa, a, piv, b, p.n);
        break;
      }
      default: throw_bad_value("builtin:blocked", routine_name(p.routine), "potrf, potrs, getrf, getrs, gesv or inv");
    }
  });
  if (p.routine == Routine::potrf) zero_other_triangle(p);
}

void run(const Params& p) {
  if (run_small(p)) {  // batches of tiny matrices: unrolled per size, loading the inputs itself (small.h)
    if (p.routine == Routine::potrf) zero_other_triangle(p);
    return;
  }
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
