// ref:any: the reference for every routine and dtype (Note [Linalg
// routines]): textbook unblocked algorithms that share nothing with LAPACK
// or the blocked kernels: Cholesky by columns, LU with partial pivoting
// (LAPACK's pivot rule: the largest |re| + |im|), substitution, Householder
// QR, cyclic Jacobi for Hermitian eigenproblems and one-sided (Hestenes)
// Jacobi for the SVD. O(n^3) with no blocking: for validation and small
// problems; it accepts every valid CPU problem, so it is the list's last row.

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <vector>

#include "backplane/dispatch_checks.h"
#include "ops/linalg/params.h"

namespace bp::ops::linalg {
namespace {

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using real_t = typename real_of<T>::type;

template <class T> T cj(T v) {
  if constexpr (std::is_floating_point_v<T>) return v;
  else return std::conj(v);
}
template <class T> real_t<T> re(T v) { return std::real(v); }
template <class T> real_t<T> abs1(T v) { return std::abs(std::real(v)) + std::abs(std::imag(v)); }
template <class T> real_t<T> abs2(T v) { return std::norm(v); }

// A column-major matrix: element (i, j) at data[i + j * rows].
template <class T>
struct Mat {
  T* data;
  int64_t rows;
  T& operator()(int64_t i, int64_t j) const { return data[i + j * rows]; }
};

// ---------------------------------------------------------------- Cholesky

// The factor of the Hermitian matrix read from one triangle, written back to
// that triangle (L below, or U = L^H above); info > 0 at the first leading
// minor that is not positive-definite.
template <class T>
int32_t potrf(Mat<T> a, int64_t n, bool upper) {
  auto get = [&](int64_t i, int64_t j) -> T& { return upper ? a(j, i) : a(i, j); };  // i >= j
  auto lower = [&](int64_t i, int64_t j) { return upper ? cj(a(j, i)) : a(i, j); };
  auto put = [&](int64_t i, int64_t j, T v) { get(i, j) = upper ? cj(v) : v; };
  for (int64_t j = 0; j < n; ++j) {
    real_t<T> d = re(lower(j, j));
    for (int64_t k = 0; k < j; ++k) d -= abs2(lower(j, k));
    if (!(d > 0)) return static_cast<int32_t>(j + 1);
    const real_t<T> root = std::sqrt(d);
    put(j, j, T(root));
    for (int64_t i = j + 1; i < n; ++i) {
      T s = lower(i, j);
      for (int64_t k = 0; k < j; ++k) s -= lower(i, k) * cj(lower(j, k));
      put(i, j, s / root);
    }
  }
  return 0;
}

// (L L^H) X = B with L read from the factor's triangle.
template <class T>
void potrs(Mat<T> a, int64_t n, bool upper, Mat<T> b, int64_t k) {
  auto L = [&](int64_t i, int64_t j) { return upper ? cj(a(j, i)) : a(i, j); };  // i >= j
  for (int64_t c = 0; c < k; ++c) {
    for (int64_t i = 0; i < n; ++i) {  // L y = b
      T s = b(i, c);
      for (int64_t j = 0; j < i; ++j) s -= L(i, j) * b(j, c);
      b(i, c) = s / L(i, i);
    }
    for (int64_t i = n - 1; i >= 0; --i) {  // L^H x = y
      T s = b(i, c);
      for (int64_t j = i + 1; j < n; ++j) s -= cj(L(j, i)) * b(j, c);
      b(i, c) = s / cj(L(i, i));
    }
  }
}

// ---------------------------------------------------------------- LU

template <class T>
int32_t getrf(Mat<T> a, int64_t m, int64_t n, int32_t* piv) {
  int32_t info = 0;
  for (int64_t j = 0; j < std::min(m, n); ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < m; ++i)
      if (abs1(a(i, j)) > abs1(a(p, j))) p = i;
    piv[j] = static_cast<int32_t>(p + 1);
    if (a(p, j) != T(0)) {
      if (p != j)
        for (int64_t c = 0; c < n; ++c) std::swap(a(j, c), a(p, c));
      for (int64_t i = j + 1; i < m; ++i) a(i, j) /= a(j, j);
    } else if (info == 0) {
      info = static_cast<int32_t>(j + 1);
    }
    for (int64_t c = j + 1; c < n; ++c)
      for (int64_t i = j + 1; i < m; ++i) a(i, c) -= a(i, j) * a(j, c);
  }
  return info;
}

template <class T>
void getrs(Mat<T> a, int64_t n, const int32_t* piv, Mat<T> b, int64_t k, bool adjoint) {
  for (int64_t c = 0; c < k; ++c) {
    if (!adjoint) {
      for (int64_t i = 0; i < n; ++i) std::swap(b(i, c), b(piv[i] - 1, c));
      for (int64_t i = 0; i < n; ++i)  // unit L
        for (int64_t j = 0; j < i; ++j) b(i, c) -= a(i, j) * b(j, c);
      for (int64_t i = n - 1; i >= 0; --i) {  // U
        for (int64_t j = i + 1; j < n; ++j) b(i, c) -= a(i, j) * b(j, c);
        b(i, c) /= a(i, i);
      }
    } else {  // A^H = U^H L^H P^T
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < i; ++j) b(i, c) -= cj(a(j, i)) * b(j, c);
        b(i, c) /= cj(a(i, i));
      }
      for (int64_t i = n - 1; i >= 0; --i)
        for (int64_t j = i + 1; j < n; ++j) b(i, c) -= cj(a(j, i)) * b(j, c);
      for (int64_t i = n - 1; i >= 0; --i) std::swap(b(i, c), b(piv[i] - 1, c));
    }
  }
}

// ---------------------------------------------------------------- QR

// Householder QR in place (LAPACK's geqrf conventions: R on and above the
// diagonal with a real diagonal, v below it with v[0] = 1, Q = H_0 ... H_{k-1}).
template <class T>
void geqrf(Mat<T> a, int64_t m, int64_t n, std::vector<T>& tau) {
  using R = real_t<T>;
  const int64_t k = std::min(m, n);
  tau.assign(static_cast<std::size_t>(k), T(0));
  for (int64_t j = 0; j < k; ++j) {
    R xnorm2 = 0;
    for (int64_t i = j + 1; i < m; ++i) xnorm2 += abs2(a(i, j));
    const T alpha = a(j, j);
    if (xnorm2 == 0 && std::imag(alpha) == 0) continue;  // H = I
    const R beta = -std::copysign(std::sqrt(abs2(alpha) + xnorm2), re(alpha));
    tau[j] = (T(beta) - alpha) / T(beta);
    const T scale = T(1) / (alpha - T(beta));
    for (int64_t i = j + 1; i < m; ++i) a(i, j) *= scale;
    a(j, j) = T(beta);
    for (int64_t c = j + 1; c < n; ++c) {  // H^H applied to the rest
      T s = a(j, c);
      for (int64_t i = j + 1; i < m; ++i) s += cj(a(i, j)) * a(i, c);
      s *= cj(tau[j]);
      a(j, c) -= s;
      for (int64_t i = j + 1; i < m; ++i) a(i, c) -= s * a(i, j);
    }
  }
}

// Q's first `cols` columns from the reflectors in a.
template <class T>
void form_q(Mat<T> a, int64_t m, int64_t n, const std::vector<T>& tau, Mat<T> q, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t i = 0; i < m; ++i) q(i, c) = i == c ? T(1) : T(0);
  for (int64_t j = std::min(m, n) - 1; j >= 0; --j) {
    for (int64_t c = 0; c < cols; ++c) {
      T s = q(j, c);
      for (int64_t i = j + 1; i < m; ++i) s += cj(a(i, j)) * q(i, c);
      s *= tau[j];
      q(j, c) -= s;
      for (int64_t i = j + 1; i < m; ++i) q(i, c) -= s * a(i, j);
    }
  }
}

// ---------------------------------------------------------------- Hermitian eigenproblem

// Cyclic Jacobi. Each rotation first turns a(p, q) real by a phase on column
// q, then zeroes it by a real rotation of rows and columns p and q.
template <class T>
int32_t eigh(Mat<T> a, int64_t n, bool upper, real_t<T>* w, bool vectors) {
  using R = real_t<T>;
  std::vector<T> h(static_cast<std::size_t>(n * n)), v(static_cast<std::size_t>(n * n), T(0));
  Mat<T> H{h.data(), n}, V{v.data(), n};
  for (int64_t j = 0; j < n; ++j) {
    V(j, j) = T(1);
    for (int64_t i = 0; i < n; ++i) {
      const bool stored = upper ? i <= j : i >= j;
      H(i, j) = stored ? a(i, j) : cj(a(j, i));
    }
    H(j, j) = T(re(H(j, j)));
  }
  const R eps = std::numeric_limits<R>::epsilon();
  int32_t info = static_cast<int32_t>(n);  // until it converges
  for (int sweep = 0; sweep < 100; ++sweep) {
    R off = 0, total = 0;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) (i == j ? total : off) += abs2(H(i, j));
    total += off;
    if (!(off <= eps * eps * total) && !std::isfinite(off)) break;
    if (off <= eps * eps * total) {
      info = 0;
      break;
    }
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const R g = std::abs(H(p, q));
        if (g == 0) continue;
        const T e = H(p, q) / T(g);  // phase: column q times conj(e), row q times e
        for (int64_t i = 0; i < n; ++i) H(i, q) *= cj(e), V(i, q) *= cj(e);
        for (int64_t i = 0; i < n; ++i) H(q, i) *= e;
        const R zeta = (re(H(q, q)) - re(H(p, p))) / (2 * g);
        const R t = (zeta >= 0 ? R(1) : R(-1)) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const R c = 1 / std::sqrt(1 + t * t), s = t * c;
        for (int64_t i = 0; i < n; ++i) {  // columns
          const T hp = H(i, p), hq = H(i, q);
          H(i, p) = c * hp - s * hq;
          H(i, q) = s * hp + c * hq;
          const T vp = V(i, p), vq = V(i, q);
          V(i, p) = c * vp - s * vq;
          V(i, q) = s * vp + c * vq;
        }
        for (int64_t i = 0; i < n; ++i) {  // rows
          const T hp = H(p, i), hq = H(q, i);
          H(p, i) = c * hp - s * hq;
          H(q, i) = s * hp + c * hq;
        }
        H(p, q) = H(q, p) = T(0);
      }
  }
  std::vector<int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return re(H(x, x)) < re(H(y, y)); });
  for (int64_t j = 0; j < n; ++j) {
    w[j] = re(H(order[j], order[j]));
    if (vectors)
      for (int64_t i = 0; i < n; ++i) a(i, j) = V(i, order[j]);
  }
  return info;
}

// ---------------------------------------------------------------- SVD

// Replaces the columns of q (rows x cols) flagged in `missing` by unit
// vectors orthogonal to every other column: each time the basis vector e_i
// that the columns so far cover least (its residual 1 - sum |q(i, o)|^2 is
// largest), orthogonalised twice (Gram-Schmidt).
template <class T>
void complete_basis(Mat<T> q, int64_t rows, int64_t cols, std::vector<bool> missing) {
  using R = real_t<T>;
  for (int64_t c = 0; c < cols; ++c) {
    if (!missing[c]) continue;
    int64_t best = 0;
    R best_residual = -1;
    for (int64_t i = 0; i < rows; ++i) {
      R covered = 0;
      for (int64_t o = 0; o < cols; ++o)
        if (!missing[o]) covered += abs2(q(i, o));
      if (1 - covered > best_residual) best_residual = 1 - covered, best = i;
    }
    std::vector<T> x(static_cast<std::size_t>(rows), T(0));
    x[best] = T(1);
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t o = 0; o < cols; ++o) {
        if (missing[o]) continue;
        T d = 0;
        for (int64_t i = 0; i < rows; ++i) d += cj(q(i, o)) * x[i];
        for (int64_t i = 0; i < rows; ++i) x[i] -= d * q(i, o);
      }
    R nrm = 0;
    for (const T& v : x) nrm += abs2(v);
    nrm = std::sqrt(nrm);
    for (int64_t i = 0; i < rows; ++i) q(i, c) = x[i] / T(nrm);
    missing[c] = false;
  }
}

// One-sided Jacobi on G (M x N, M >= N): G V = U diag(s). Returns info (0,
// or N when it did not converge). u gets `ucols` columns, v is N x N.
template <class T>
int32_t jacobi_svd(std::vector<T>& g, int64_t M, int64_t N, real_t<T>* s, std::vector<T>& u, int64_t ucols,
                   std::vector<T>& v) {
  using R = real_t<T>;
  Mat<T> G{g.data(), M};
  v.assign(static_cast<std::size_t>(N * N), T(0));
  Mat<T> V{v.data(), N};
  for (int64_t i = 0; i < N; ++i) V(i, i) = T(1);
  const R eps = std::numeric_limits<R>::epsilon();
  int32_t info = static_cast<int32_t>(N);
  for (int sweep = 0; sweep < 80; ++sweep) {
    bool rotated = false, finite = true;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = i + 1; j < N; ++j) {
        R alpha = 0, beta = 0;
        T gamma = 0;
        for (int64_t r = 0; r < M; ++r) {
          alpha += abs2(G(r, i));
          beta += abs2(G(r, j));
          gamma += cj(G(r, i)) * G(r, j);
        }
        const R gm = std::abs(gamma);
        if (!std::isfinite(alpha) || !std::isfinite(beta) || !std::isfinite(gm)) finite = false;
        if (!(gm > eps * std::sqrt(alpha * beta)) || gm == 0) continue;
        rotated = true;
        const T e = gamma / T(gm);
        const R zeta = (beta - alpha) / (2 * gm);
        const R t = (zeta >= 0 ? R(1) : R(-1)) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const R c = 1 / std::sqrt(1 + t * t), sn = t * c;
        for (int64_t r = 0; r < M; ++r) {
          const T gi = G(r, i), h = cj(e) * G(r, j);
          G(r, i) = c * gi - sn * h;
          G(r, j) = sn * gi + c * h;
        }
        for (int64_t r = 0; r < N; ++r) {
          const T vi = V(r, i), h = cj(e) * V(r, j);
          V(r, i) = c * vi - sn * h;
          V(r, j) = sn * vi + c * h;
        }
      }
    if (!finite) break;
    if (!rotated) {
      info = 0;
      break;
    }
  }
  std::vector<R> norms(static_cast<std::size_t>(N));
  for (int64_t j = 0; j < N; ++j) {
    R x = 0;
    for (int64_t r = 0; r < M; ++r) x += abs2(G(r, j));
    norms[j] = std::sqrt(x);
  }
  std::vector<int64_t> order(static_cast<std::size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return norms[x] > norms[y]; });
  std::vector<T> vs(v.size());
  Mat<T> VS{vs.data(), N};
  u.assign(static_cast<std::size_t>(M * ucols), T(0));
  Mat<T> U{u.data(), M};
  std::vector<bool> missing(static_cast<std::size_t>(ucols), true);
  const R tiny = std::numeric_limits<R>::min() / eps;
  for (int64_t j = 0; j < N; ++j) {
    const int64_t o = order[j];
    s[j] = norms[o];
    for (int64_t r = 0; r < N; ++r) VS(r, j) = V(r, o);
    if (j < ucols && norms[o] > tiny) {
      for (int64_t r = 0; r < M; ++r) U(r, j) = G(r, o) / T(norms[o]);
      missing[j] = false;
    }
  }
  v.swap(vs);
  complete_basis(U, M, ucols, missing);
  return info;
}

template <class T>
int32_t svd(const Params& p, int64_t index) {
  const int64_t m = p.m, n = p.n;
  const bool tall = m >= n;
  const int64_t M = tall ? m : n, N = tall ? n : m;
  Mat<T> a{matrix<T>(p.a, index), m};
  std::vector<T> g(static_cast<std::size_t>(M * N));
  for (int64_t j = 0; j < N; ++j)
    for (int64_t i = 0; i < M; ++i) g[i + j * M] = tall ? a(i, j) : cj(a(j, i));
  // Columns of the tall side's U: those of U (tall) or of V (wide).
  const int64_t ucols = !p.want_vectors ? N : tall ? p.u_cols : p.vh_rows;
  std::vector<T> u, v;
  auto* s = static_cast<real_t<T>*>(p.w.data()) + index * N;
  const int32_t info = jacobi_svd(g, M, N, s, u, ucols, v);
  if (!p.want_vectors) return info;
  Mat<T> U{matrix<T>(p.u, index), m}, VH{matrix<T>(p.vh, index), p.vh_rows};
  if (tall) {  // A = U S V^H
    for (int64_t j = 0; j < p.u_cols; ++j)
      for (int64_t i = 0; i < m; ++i) U(i, j) = u[i + j * M];
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < p.vh_rows; ++i) VH(i, j) = cj(v[j + i * N]);
  } else {  // A^H = U' S V'^H, so A = V' S U'^H
    for (int64_t j = 0; j < p.u_cols; ++j)
      for (int64_t i = 0; i < m; ++i) U(i, j) = v[i + j * N];
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < p.vh_rows; ++i) VH(i, j) = cj(u[j + i * M]);
  }
  return info;
}

// ---------------------------------------------------------------- least squares

// X = V diag(1/s) U^H B over the singular values above rcond * the largest
// (what gelsd and gelss compute), from the Jacobi SVD above. For m > n the
// residual's norm goes in row n of b (rows n..m-1 are what the front end
// sums the squares of, as LAPACK leaves them there).
template <class T>
int32_t lstsq(const Params& p, int64_t index) {
  using R = real_t<T>;
  const int64_t m = p.m, n = p.n, k = p.k, mn = std::min(m, n), ldb = std::max(m, n);
  Mat<T> a{matrix<T>(p.a, index), m}, b{matrix<T>(p.b, index), ldb};
  const bool tall = m >= n;
  const int64_t M = tall ? m : n, N = tall ? n : m;
  std::vector<T> g(static_cast<std::size_t>(M * N)), u, v;
  for (int64_t j = 0; j < N; ++j)
    for (int64_t i = 0; i < M; ++i) g[i + j * M] = tall ? a(i, j) : cj(a(j, i));
  std::vector<R> s(static_cast<std::size_t>(N));
  const int32_t info = jacobi_svd(g, M, N, s.data(), u, N, v);
  // A = Ua S Va^H: tall: Ua = u (m x N), Va = v; wide: Ua = v (m x m), Va = u (n x N).
  auto Ua = [&](int64_t i, int64_t j) { return tall ? u[i + j * M] : v[i + j * N]; };
  auto Va = [&](int64_t i, int64_t j) { return tall ? v[i + j * N] : u[i + j * M]; };
  const R cut = static_cast<R>(p.rcond) * (s.empty() ? R(0) : s[0]);
  int64_t rank = 0;
  for (int64_t j = 0; j < mn; ++j) rank += s[j] > cut ? 1 : 0;
  std::vector<T> x(static_cast<std::size_t>(n * k), T(0));
  for (int64_t c = 0; c < k; ++c)
    for (int64_t j = 0; j < rank; ++j) {
      T d = 0;
      for (int64_t i = 0; i < m; ++i) d += cj(Ua(i, j)) * b(i, c);
      d /= T(s[j]);
      for (int64_t i = 0; i < n; ++i) x[i + c * n] += Va(i, j) * d;
    }
  for (int64_t c = 0; c < k; ++c) {
    R res = 0;
    for (int64_t i = 0; i < m; ++i) {
      T r = b(i, c);
      for (int64_t j = 0; j < n; ++j) r -= a(i, j) * x[j + c * n];
      res += abs2(r);
    }
    for (int64_t i = 0; i < ldb; ++i) b(i, c) = i < n ? x[i + c * n] : i == n ? T(std::sqrt(res)) : T(0);
  }
  if (p.rank.defined()) p.rank.data_ptr<int64_t>()[index] = rank;
  if (p.w.defined()) std::copy(s.begin(), s.begin() + mn, static_cast<R*>(p.w.data()) + index * mn);
  return info;
}

// ---------------------------------------------------------------- dispatch

template <class T>
void run_typed(const Params& p) {
  int32_t* info = p.info.defined() ? p.info.data_ptr<int32_t>() : nullptr;
  const int64_t mn = p.min_mn();
  for_each_matrix(p, [&](int64_t i) {
    Mat<T> a{matrix<T>(p.a, i), p.m > 0 ? p.m : 1};
    Mat<T> b{p.b.defined() ? matrix<T>(p.b, i) : nullptr, p.n > 0 ? p.n : 1};
    int32_t* piv = p.piv.defined() ? p.piv.data_ptr<int32_t>() + i * mn : nullptr;
    int32_t result = 0;
    switch (p.routine) {
      case Routine::potrf: result = potrf(a, p.n, p.upper); break;
      case Routine::potrs: potrs(a, p.n, p.upper, b, p.k); break;
      case Routine::getrf: result = getrf(a, p.m, p.n, piv); break;
      case Routine::getrs: getrs(a, p.n, piv, b, p.k, p.adjoint); break;
      case Routine::gesv:
      case Routine::inv:
        result = getrf(a, p.n, p.n, piv);
        getrs(a, p.n, piv, b, p.k, false);
        break;
      case Routine::qr: {
        std::vector<T> tau;
        geqrf(a, p.m, p.n, tau);
        Mat<T> r{matrix<T>(p.r, i), p.r_rows > 0 ? p.r_rows : 1};
        for (int64_t c = 0; c < p.n; ++c)
          for (int64_t row = 0; row < p.r_rows; ++row) r(row, c) = row <= c && row < p.m ? a(row, c) : T(0);
        if (p.want_q) form_q(a, p.m, p.n, tau, Mat<T>{matrix<T>(p.q, i), p.m > 0 ? p.m : 1}, p.q_cols);
        break;
      }
      case Routine::eigh:
        result = eigh(a, p.n, p.upper, static_cast<real_t<T>*>(p.w.data()) + i * p.n, p.want_vectors);
        break;
      case Routine::svd: result = svd<T>(p, i); break;
      case Routine::lstsq: result = lstsq<T>(p, i); break;
    }
    if (info) info[i] = result;
  });
  if (p.routine == Routine::potrf) zero_other_triangle(p);
}

void run(const Params& p) {
  load_inputs(p);
  switch (p.dtype) {
    case DType::f32: run_typed<float>(p); break;
    case DType::f64: run_typed<double>(p); break;
    case DType::c64: run_typed<std::complex<float>>(p); break;
    case DType::c128: run_typed<std::complex<double>>(p); break;
    default: throw_bad_value("linalg ref:any", dtype_name(p.dtype), "float32, float64, complex64 or complex128");
  }
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_ref() {
  dispatch::Properties props;
  props.workspace = "a copy of each matrix (eigh, svd)";
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64, DType::c64, DType::c128}));
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", props, std::move(list), run);
}

}  // namespace bp::ops::linalg
