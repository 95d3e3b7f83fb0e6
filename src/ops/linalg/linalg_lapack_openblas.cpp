// lapack:potrf, lapack:getrf, lapack:geqrf, lapack:syevd, lapack:gesdd,
// lapack:gels (gels / gelsy / gelsd / gelss, the lstsq driver): the
// LAPACK inside the OpenBLAS this build links (Debian's libopenblas carries
// the reference LAPACK's Fortran symbols, with OpenBLAS's own faster
// potrf / getrf / getrs / trsm; no LAPACKE is needed). Called through the
// Fortran ABI, as PyTorch does: every argument by address, 32-bit integers
// (blasint of this OpenBLAS), and one hidden length per character argument.
// The thread count is OpenBLAS's, which bp::set_num_threads governs (Note
// [One thread count]). Compiled only when OpenBLAS is found (Note [Source
// layout and globbing]).

#include <algorithm>
#include <climits>
#include <complex>
#include <cstddef>
#include <vector>

#include "backplane/dispatch_checks.h"
#include "ops/linalg/params.h"

namespace {
using cf = std::complex<float>;
using cd = std::complex<double>;
using fint = int;  // blasint: this OpenBLAS is built without OPENBLAS_USE64BITINT
using flen = std::size_t;
}  // namespace

extern "C" {
// Cholesky
void spotrf_(const char*, const fint*, float*, const fint*, fint*, flen);
void dpotrf_(const char*, const fint*, double*, const fint*, fint*, flen);
void cpotrf_(const char*, const fint*, cf*, const fint*, fint*, flen);
void zpotrf_(const char*, const fint*, cd*, const fint*, fint*, flen);
void spotrs_(const char*, const fint*, const fint*, const float*, const fint*, float*, const fint*, fint*, flen);
void dpotrs_(const char*, const fint*, const fint*, const double*, const fint*, double*, const fint*, fint*, flen);
void cpotrs_(const char*, const fint*, const fint*, const cf*, const fint*, cf*, const fint*, fint*, flen);
void zpotrs_(const char*, const fint*, const fint*, const cd*, const fint*, cd*, const fint*, fint*, flen);
// LU
void sgetrf_(const fint*, const fint*, float*, const fint*, fint*, fint*);
void dgetrf_(const fint*, const fint*, double*, const fint*, fint*, fint*);
void cgetrf_(const fint*, const fint*, cf*, const fint*, fint*, fint*);
void zgetrf_(const fint*, const fint*, cd*, const fint*, fint*, fint*);
void sgetrs_(const char*, const fint*, const fint*, const float*, const fint*, const fint*, float*, const fint*, fint*,
             flen);
void dgetrs_(const char*, const fint*, const fint*, const double*, const fint*, const fint*, double*, const fint*,
             fint*, flen);
void cgetrs_(const char*, const fint*, const fint*, const cf*, const fint*, const fint*, cf*, const fint*, fint*, flen);
void zgetrs_(const char*, const fint*, const fint*, const cd*, const fint*, const fint*, cd*, const fint*, fint*, flen);
// QR
void sgeqrf_(const fint*, const fint*, float*, const fint*, float*, float*, const fint*, fint*);
void dgeqrf_(const fint*, const fint*, double*, const fint*, double*, double*, const fint*, fint*);
void cgeqrf_(const fint*, const fint*, cf*, const fint*, cf*, cf*, const fint*, fint*);
void zgeqrf_(const fint*, const fint*, cd*, const fint*, cd*, cd*, const fint*, fint*);
void sorgqr_(const fint*, const fint*, const fint*, float*, const fint*, const float*, float*, const fint*, fint*);
void dorgqr_(const fint*, const fint*, const fint*, double*, const fint*, const double*, double*, const fint*, fint*);
void cungqr_(const fint*, const fint*, const fint*, cf*, const fint*, const cf*, cf*, const fint*, fint*);
void zungqr_(const fint*, const fint*, const fint*, cd*, const fint*, const cd*, cd*, const fint*, fint*);
// Hermitian eigenproblem (divide and conquer, as PyTorch's CPU)
void ssyevd_(const char*, const char*, const fint*, float*, const fint*, float*, float*, const fint*, fint*,
             const fint*, fint*, flen, flen);
void dsyevd_(const char*, const char*, const fint*, double*, const fint*, double*, double*, const fint*, fint*,
             const fint*, fint*, flen, flen);
void cheevd_(const char*, const char*, const fint*, cf*, const fint*, float*, cf*, const fint*, float*, const fint*,
             fint*, const fint*, fint*, flen, flen);
void zheevd_(const char*, const char*, const fint*, cd*, const fint*, double*, cd*, const fint*, double*,
             const fint*, fint*, const fint*, fint*, flen, flen);
// SVD (divide and conquer, PyTorch's CPU default)
void sgesdd_(const char*, const fint*, const fint*, float*, const fint*, float*, float*, const fint*, float*,
             const fint*, float*, const fint*, fint*, fint*, flen);
void dgesdd_(const char*, const fint*, const fint*, double*, const fint*, double*, double*, const fint*, double*,
             const fint*, double*, const fint*, fint*, fint*, flen);
void cgesdd_(const char*, const fint*, const fint*, cf*, const fint*, float*, cf*, const fint*, cf*, const fint*, cf*,
             const fint*, float*, fint*, fint*, flen);
void zgesdd_(const char*, const fint*, const fint*, cd*, const fint*, double*, cd*, const fint*, cd*, const fint*, cd*,
             const fint*, double*, fint*, fint*, flen);
// Least squares
void sgels_(const char*, const fint*, const fint*, const fint*, float*, const fint*, float*, const fint*, float*,
            const fint*, fint*, flen);
void dgels_(const char*, const fint*, const fint*, const fint*, double*, const fint*, double*, const fint*, double*,
            const fint*, fint*, flen);
void cgels_(const char*, const fint*, const fint*, const fint*, cf*, const fint*, cf*, const fint*, cf*, const fint*,
            fint*, flen);
void zgels_(const char*, const fint*, const fint*, const fint*, cd*, const fint*, cd*, const fint*, cd*, const fint*,
            fint*, flen);
void sgelsy_(const fint*, const fint*, const fint*, float*, const fint*, float*, const fint*, fint*, const float*,
             fint*, float*, const fint*, fint*);
void dgelsy_(const fint*, const fint*, const fint*, double*, const fint*, double*, const fint*, fint*, const double*,
             fint*, double*, const fint*, fint*);
void cgelsy_(const fint*, const fint*, const fint*, cf*, const fint*, cf*, const fint*, fint*, const float*, fint*,
             cf*, const fint*, float*, fint*);
void zgelsy_(const fint*, const fint*, const fint*, cd*, const fint*, cd*, const fint*, fint*, const double*, fint*,
             cd*, const fint*, double*, fint*);
void sgelsd_(const fint*, const fint*, const fint*, float*, const fint*, float*, const fint*, float*, const float*,
             fint*, float*, const fint*, fint*, fint*);
void dgelsd_(const fint*, const fint*, const fint*, double*, const fint*, double*, const fint*, double*,
             const double*, fint*, double*, const fint*, fint*, fint*);
void cgelsd_(const fint*, const fint*, const fint*, cf*, const fint*, cf*, const fint*, float*, const float*, fint*,
             cf*, const fint*, float*, fint*, fint*);
void zgelsd_(const fint*, const fint*, const fint*, cd*, const fint*, cd*, const fint*, double*, const double*, fint*,
             cd*, const fint*, double*, fint*, fint*);
void sgelss_(const fint*, const fint*, const fint*, float*, const fint*, float*, const fint*, float*, const float*,
             fint*, float*, const fint*, fint*);
void dgelss_(const fint*, const fint*, const fint*, double*, const fint*, double*, const fint*, double*,
             const double*, fint*, double*, const fint*, fint*);
void cgelss_(const fint*, const fint*, const fint*, cf*, const fint*, cf*, const fint*, float*, const float*, fint*,
             cf*, const fint*, float*, fint*);
void zgelss_(const fint*, const fint*, const fint*, cd*, const fint*, cd*, const fint*, double*, const double*,
             fint*, cd*, const fint*, double*, fint*);
}

namespace bp::ops::linalg {
namespace {

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };

// One type's entry points, so the runs below are written once.
template <class T> struct Lapack;
#define BP_LAPACK_TYPE(T, p, ORGQR)                                                              \
  template <> struct Lapack<T> {                                                                                  \
    static void potrf(const char* u, const fint* n, T* a, const fint* lda, fint* info) {                          \
      p##potrf_(u, n, a, lda, info, 1);                                                                          \
    }                                                                                                             \
    static void potrs(const char* u, const fint* n, const fint* k, const T* a, const fint* lda, T* b,            \
                      const fint* ldb, fint* info) {                                                              \
      p##potrs_(u, n, k, a, lda, b, ldb, info, 1);                                                               \
    }                                                                                                             \
    static void getrf(const fint* m, const fint* n, T* a, const fint* lda, fint* piv, fint* info) {              \
      p##getrf_(m, n, a, lda, piv, info);                                                                        \
    }                                                                                                             \
    static void getrs(const char* t, const fint* n, const fint* k, const T* a, const fint* lda, const fint* piv, \
                      T* b, const fint* ldb, fint* info) {                                                        \
      p##getrs_(t, n, k, a, lda, piv, b, ldb, info, 1);                                                          \
    }                                                                                                             \
    static void geqrf(const fint* m, const fint* n, T* a, const fint* lda, T* tau, T* w, const fint* lw,         \
                      fint* info) {                                                                               \
      p##geqrf_(m, n, a, lda, tau, w, lw, info);                                                                 \
    }                                                                                                             \
    static void orgqr(const fint* m, const fint* n, const fint* k, T* a, const fint* lda, const T* tau, T* w,    \
                      const fint* lw, fint* info) {                                                               \
      ORGQR(m, n, k, a, lda, tau, w, lw, info);                                                                  \
    }                                                                                                             \
  };
BP_LAPACK_TYPE(float, s, sorgqr_)
BP_LAPACK_TYPE(double, d, dorgqr_)
BP_LAPACK_TYPE(cf, c, cungqr_)
BP_LAPACK_TYPE(cd, z, zungqr_)
#undef BP_LAPACK_TYPE

// The eigen and SVD drivers differ in their arguments between real and
// complex types (the complex ones take a real work array too).
void syevd(const char* j, const char* u, const fint* n, float* a, const fint* lda, float* w, float* wk,
           const fint* lw, float*, const fint*, fint* iw, const fint* liw, fint* info) {
  ssyevd_(j, u, n, a, lda, w, wk, lw, iw, liw, info, 1, 1);
}
void syevd(const char* j, const char* u, const fint* n, double* a, const fint* lda, double* w, double* wk,
           const fint* lw, double*, const fint*, fint* iw, const fint* liw, fint* info) {
  dsyevd_(j, u, n, a, lda, w, wk, lw, iw, liw, info, 1, 1);
}
void syevd(const char* j, const char* u, const fint* n, cf* a, const fint* lda, float* w, cf* wk, const fint* lw,
           float* rw, const fint* lrw, fint* iw, const fint* liw, fint* info) {
  cheevd_(j, u, n, a, lda, w, wk, lw, rw, lrw, iw, liw, info, 1, 1);
}
void syevd(const char* j, const char* u, const fint* n, cd* a, const fint* lda, double* w, cd* wk, const fint* lw,
           double* rw, const fint* lrw, fint* iw, const fint* liw, fint* info) {
  zheevd_(j, u, n, a, lda, w, wk, lw, rw, lrw, iw, liw, info, 1, 1);
}
void gesdd(const char* j, const fint* m, const fint* n, float* a, const fint* lda, float* s, float* u, const fint* ldu,
           float* vt, const fint* ldvt, float* wk, const fint* lw, float*, fint* iw, fint* info) {
  sgesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, wk, lw, iw, info, 1);
}
void gesdd(const char* j, const fint* m, const fint* n, double* a, const fint* lda, double* s, double* u,
           const fint* ldu, double* vt, const fint* ldvt, double* wk, const fint* lw, double*, fint* iw, fint* info) {
  dgesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, wk, lw, iw, info, 1);
}
void gesdd(const char* j, const fint* m, const fint* n, cf* a, const fint* lda, float* s, cf* u, const fint* ldu,
           cf* vt, const fint* ldvt, cf* wk, const fint* lw, float* rw, fint* iw, fint* info) {
  cgesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, wk, lw, rw, iw, info, 1);
}
void gesdd(const char* j, const fint* m, const fint* n, cd* a, const fint* lda, double* s, cd* u, const fint* ldu,
           cd* vt, const fint* ldvt, cd* wk, const fint* lw, double* rw, fint* iw, fint* info) {
  zgesdd_(j, m, n, a, lda, s, u, ldu, vt, ldvt, wk, lw, rw, iw, info, 1);
}

fint to_fint(int64_t v) { return static_cast<fint>(v); }
// A workspace size LAPACK reported in a T (its real part).
template <class T> fint work_size(T v) { return std::max<fint>(1, static_cast<fint>(std::real(v))); }

template <class T>
void run_potrf(const Params& p) {
  const char uplo = p.upper ? 'U' : 'L';
  const fint n = to_fint(p.n), lda = to_fint(ld(p.a)), k = to_fint(p.k), ldb = to_fint(ld(p.b));
  int32_t* infos = p.info.data_ptr<int32_t>();
  for_each_matrix(p, [&](int64_t i) {
    fint info = 0;
    if (p.routine == Routine::potrf) {
      Lapack<T>::potrf(&uplo, &n, matrix<T>(p.a, i), &lda, &info);
      infos[i] = info;
    } else {
      Lapack<T>::potrs(&uplo, &n, &k, matrix<T>(p.a, i), &lda, matrix<T>(p.b, i), &ldb, &info);
    }
  });
  if (p.routine == Routine::potrf) zero_other_triangle(p);
}

template <class T>
void run_getrf(const Params& p) {
  const fint m = to_fint(p.m), n = to_fint(p.n), lda = to_fint(ld(p.a)), k = to_fint(p.k), ldb = to_fint(ld(p.b));
  const int64_t mn = p.min_mn();
  const char trans = p.adjoint ? 'C' : 'N';
  int32_t* infos = p.info.defined() ? p.info.data_ptr<int32_t>() : nullptr;
  int32_t* pivs = p.piv.data_ptr<int32_t>();
  for_each_matrix(p, [&](int64_t i) {
    fint info = 0;
    fint* piv = pivs + i * mn;
    if (p.routine != Routine::getrs) {
      Lapack<T>::getrf(&m, &n, matrix<T>(p.a, i), &lda, piv, &info);
      if (infos) infos[i] = info;
    }
    if (p.routine != Routine::getrf && n > 0) {
      fint solve_info = 0;
      Lapack<T>::getrs(&trans, &n, &k, matrix<T>(p.a, i), &lda, piv, matrix<T>(p.b, i), &ldb, &solve_info);
    }
  });
}

template <class T>
void run_geqrf(const Params& p) {
  const fint m = to_fint(p.m), n = to_fint(p.n), lda = to_fint(ld(p.a)), kk = to_fint(p.min_mn());
  const fint qc = to_fint(p.q_cols), ldq = to_fint(ld(p.q.defined() ? p.q : p.a));
  // Workspace sizes, asked once (they depend on the shape only).
  fint info = 0, query = -1;
  T wq{}, oq{};
  std::vector<T> probe(1);
  Lapack<T>::geqrf(&m, &n, probe.data(), &lda, probe.data(), &wq, &query, &info);
  if (p.want_q && qc > 0) Lapack<T>::orgqr(&m, &qc, &kk, probe.data(), &ldq, probe.data(), &oq, &query, &info);
  const fint lwork = std::max(work_size(wq), p.want_q ? work_size(oq) : 1);
  for_each_matrix(p, [&](int64_t i) {
    std::vector<T> tau(static_cast<std::size_t>(std::max<fint>(kk, 1))), work(static_cast<std::size_t>(lwork));
    fint inf = 0;
    T* a = matrix<T>(p.a, i);
    if (kk > 0) Lapack<T>::geqrf(&m, &n, a, &lda, tau.data(), work.data(), &lwork, &inf);
    // R: the upper triangle of the first r_rows rows.
    T* r = matrix<T>(p.r, i);
    const int64_t rr = p.r_rows;
    for (int64_t c = 0; c < p.n; ++c)
      for (int64_t row = 0; row < rr; ++row) r[row + c * rr] = row <= c && row < p.m ? a[row + c * p.m] : T(0);
    if (!p.want_q || qc == 0) return;
    T* q = matrix<T>(p.q, i);
    for (int64_t c = 0; c < p.q_cols; ++c)
      for (int64_t row = 0; row < p.m; ++row) q[row + c * p.m] = c < p.n ? a[row + c * p.m] : T(0);
    Lapack<T>::orgqr(&m, &qc, &kk, q, &ldq, tau.data(), work.data(), &lwork, &inf);
  });
}

template <class T>
void run_syevd(const Params& p) {
  using R = typename real_of<T>::type;
  const char jobz = p.want_vectors ? 'V' : 'N', uplo = p.upper ? 'U' : 'L';
  const fint n = to_fint(p.n), lda = to_fint(ld(p.a));
  fint info = 0, query = -1, iwq = 0;
  T wq{};
  R rwq{};
  std::vector<T> probe(1);
  std::vector<R> rprobe(1);
  syevd(&jobz, &uplo, &n, probe.data(), &lda, rprobe.data(), &wq, &query, &rwq, &query, &iwq, &query, &info);
  const fint lwork = work_size(wq), lrwork = std::max<fint>(1, static_cast<fint>(rwq)), liwork = std::max<fint>(1, iwq);
  int32_t* infos = p.info.data_ptr<int32_t>();
  for_each_matrix(p, [&](int64_t i) {
    std::vector<T> work(static_cast<std::size_t>(lwork));
    std::vector<R> rwork(static_cast<std::size_t>(lrwork));
    std::vector<fint> iwork(static_cast<std::size_t>(liwork));
    fint inf = 0;
    syevd(&jobz, &uplo, &n, matrix<T>(p.a, i), &lda, static_cast<R*>(p.w.data()) + i * p.n, work.data(), &lwork,
          rwork.data(), &lrwork, iwork.data(), &liwork, &inf);
    infos[i] = inf;
  });
}

template <class T>
void run_gesdd(const Params& p) {
  using R = typename real_of<T>::type;
  const char jobz = !p.want_vectors ? 'N' : p.u_cols == p.m && p.vh_rows == p.n ? 'A' : 'S';
  const fint m = to_fint(p.m), n = to_fint(p.n), lda = to_fint(ld(p.a));
  const int64_t mn = p.min_mn(), mx = std::max(p.m, p.n);
  const fint ldu = p.want_vectors ? to_fint(ld(p.u)) : 1, ldvt = p.want_vectors ? to_fint(ld(p.vh)) : 1;
  // LAPACK 3.7's minimum real work for the complex drivers.
  const int64_t lrwork = jobz == 'N' ? 7 * mn : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
  fint info = 0, query = -1;
  T wq{};
  std::vector<T> probe(1);
  std::vector<R> rprobe(static_cast<std::size_t>(std::max<int64_t>(lrwork, 1)));
  std::vector<fint> iprobe(static_cast<std::size_t>(std::max<int64_t>(8 * mn, 1)));
  gesdd(&jobz, &m, &n, probe.data(), &lda, rprobe.data(), probe.data(), &ldu, probe.data(), &ldvt, &wq, &query,
        rprobe.data(), iprobe.data(), &info);
  const fint lwork = work_size(wq);
  int32_t* infos = p.info.data_ptr<int32_t>();
  for_each_matrix(p, [&](int64_t i) {
    std::vector<T> work(static_cast<std::size_t>(lwork)), dummy(1);
    std::vector<R> rwork(static_cast<std::size_t>(std::max<int64_t>(lrwork, 1)));
    std::vector<fint> iwork(static_cast<std::size_t>(std::max<int64_t>(8 * mn, 1)));
    fint inf = 0;
    T* u = p.want_vectors ? matrix<T>(p.u, i) : dummy.data();
    T* vt = p.want_vectors ? matrix<T>(p.vh, i) : dummy.data();
    gesdd(&jobz, &m, &n, matrix<T>(p.a, i), &lda, static_cast<R*>(p.w.data()) + i * mn, u, &ldu, vt, &ldvt,
          work.data(), &lwork, rwork.data(), iwork.data(), &inf);
    infos[i] = inf;
  });
}

// The least-squares drivers by type; the complex ones take a real work
// array (rw) as well, which the real ones ignore.
#define BP_LSTSQ(T, R, p, RW)                                                                                     \
  void gels(const fint* m, const fint* n, const fint* k, T* a, const fint* lda, T* b, const fint* ldb, T* w,      \
            const fint* lw, fint* info) {                                                                         \
    p##gels_("N", m, n, k, a, lda, b, ldb, w, lw, info, 1);                                                      \
  }                                                                                                               \
  void gelsy(const fint* m, const fint* n, const fint* k, T* a, const fint* lda, T* b, const fint* ldb,           \
             fint* jpvt, const R* rcond, fint* rank, T* w, const fint* lw, R* rw, fint* info) {                   \
    (void)rw;                                                                                                     \
    p##gelsy_(m, n, k, a, lda, b, ldb, jpvt, rcond, rank, w, lw, RW info);                                       \
  }                                                                                                               \
  void gelsd(const fint* m, const fint* n, const fint* k, T* a, const fint* lda, T* b, const fint* ldb, R* s,     \
             const R* rcond, fint* rank, T* w, const fint* lw, R* rw, fint* iw, fint* info) {                     \
    (void)rw;                                                                                                     \
    p##gelsd_(m, n, k, a, lda, b, ldb, s, rcond, rank, w, lw, RW iw, info);                                      \
  }                                                                                                               \
  void gelss(const fint* m, const fint* n, const fint* k, T* a, const fint* lda, T* b, const fint* ldb, R* s,     \
             const R* rcond, fint* rank, T* w, const fint* lw, R* rw, fint* info) {                               \
    (void)rw;                                                                                                     \
    p##gelss_(m, n, k, a, lda, b, ldb, s, rcond, rank, w, lw, RW info);                                          \
  }
#define BP_NO_RWORK
#define BP_RWORK rw,
BP_LSTSQ(float, float, s, BP_NO_RWORK)
BP_LSTSQ(double, double, d, BP_NO_RWORK)
BP_LSTSQ(cf, float, c, BP_RWORK)
BP_LSTSQ(cd, double, z, BP_RWORK)
#undef BP_LSTSQ
#undef BP_NO_RWORK
#undef BP_RWORK

template <class T>
void run_gels(const Params& p) {
  using R = typename real_of<T>::type;
  const fint m = to_fint(p.m), n = to_fint(p.n), k = to_fint(p.k), lda = to_fint(ld(p.a)), ldb = to_fint(ld(p.b));
  const int64_t mn = p.min_mn();
  const R rcond = static_cast<R>(p.rcond);
  int32_t* infos = p.info.data_ptr<int32_t>();
  int64_t* ranks = p.rank.defined() ? p.rank.data_ptr<int64_t>() : nullptr;
  R* sv = p.w.defined() ? static_cast<R*>(p.w.data()) : nullptr;
  // Work sizes by a query (the shape decides them); iwork and rwork by LAPACK's formulas, generously.
  fint query = -1, info = 0, rank = 0, iq = 0;
  T wq{};
  std::vector<T> probe(1);
  std::vector<R> rprobe(static_cast<std::size_t>(std::max<int64_t>(1, 10 * std::max(p.m, p.n) + 64 * mn)));
  std::vector<fint> jprobe(static_cast<std::size_t>(std::max<fint>(n, 1)) + 64 * static_cast<std::size_t>(mn + 1));
  const std::string& d = p.driver;
  if (d == "gels") gels(&m, &n, &k, probe.data(), &lda, probe.data(), &ldb, &wq, &query, &info);
  else if (d == "gelsd")
    gelsd(&m, &n, &k, probe.data(), &lda, probe.data(), &ldb, rprobe.data(), &rcond, &rank, &wq, &query,
          rprobe.data(), jprobe.data(), &info);
  else if (d == "gelss")
    gelss(&m, &n, &k, probe.data(), &lda, probe.data(), &ldb, rprobe.data(), &rcond, &rank, &wq, &query,
          rprobe.data(), &info);
  else
    gelsy(&m, &n, &k, probe.data(), &lda, probe.data(), &ldb, jprobe.data(), &rcond, &rank, &wq, &query,
          rprobe.data(), &info);
  (void)iq;
  const fint lwork = work_size(wq);
  for_each_matrix(p, [&](int64_t i) {
    std::vector<T> work(static_cast<std::size_t>(lwork));
    std::vector<R> rwork(rprobe.size()), s(static_cast<std::size_t>(std::max<int64_t>(mn, 1)));
    std::vector<fint> iwork(jprobe.size(), 0);
    fint inf = 0, r = 0;
    T* a = matrix<T>(p.a, i);
    T* b = matrix<T>(p.b, i);
    if (d == "gels") gels(&m, &n, &k, a, &lda, b, &ldb, work.data(), &lwork, &inf);
    else if (d == "gelsd")
      gelsd(&m, &n, &k, a, &lda, b, &ldb, s.data(), &rcond, &r, work.data(), &lwork, rwork.data(), iwork.data(), &inf);
    else if (d == "gelss")
      gelss(&m, &n, &k, a, &lda, b, &ldb, s.data(), &rcond, &r, work.data(), &lwork, rwork.data(), &inf);
    else
      gelsy(&m, &n, &k, a, &lda, b, &ldb, iwork.data(), &rcond, &r, work.data(), &lwork, rwork.data(), &inf);
    infos[i] = inf;
    if (ranks) ranks[i] = r;
    if (sv) std::copy(s.begin(), s.begin() + mn, sv + i * mn);
  });
}

template <template <class> class Run>
void by_dtype(const Params& p) {
  load_inputs(p);
  switch (p.dtype) {
    case DType::f32: Run<float>::go(p); break;
    case DType::f64: Run<double>::go(p); break;
    case DType::c64: Run<cf>::go(p); break;
    case DType::c128: Run<cd>::go(p); break;
    default: throw_bad_value("linalg lapack", dtype_name(p.dtype), "float32, float64, complex64 or complex128");
  }
}
template <class T> struct Potrf { static void go(const Params& p) { run_potrf<T>(p); } };
template <class T> struct Getrf { static void go(const Params& p) { run_getrf<T>(p); } };
template <class T> struct Geqrf { static void go(const Params& p) { run_geqrf<T>(p); } };
template <class T> struct Syevd { static void go(const Params& p) { run_syevd<T>(p); } };
template <class T> struct Gesdd { static void go(const Params& p) { run_gesdd<T>(p); } };
template <class T> struct Gels { static void go(const Params& p) { run_gels<T>(p); } };

// "size": every dim fits LAPACK's 32-bit integers (and their products the workspaces).
bool int_range(const Params& p, dispatch::Reasons& r) {
  const int64_t big = std::max({p.m, p.n, p.k});
  return big <= 46340 || r.fail("matrix dims of at most 46340 (LAPACK's 32-bit workspace sizes)",
                                [&] { return std::to_string(big); });
}

std::unique_ptr<dispatch::Implementation> row(const char* name, std::vector<Routine> routines,
                                              void (*run)(const Params&)) {
  dispatch::Properties props;
  props.workspace = "LAPACK's work arrays (per matrix)";
  std::vector<dispatch::Check<Params>> list;
  list.push_back(routine_in(std::move(routines)));
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64, DType::c64, DType::c128}));
  list.push_back({"size", int_range});
  return std::make_unique<dispatch::Impl<Params>>(name, "openblas", props, std::move(list), run);
}

}  // namespace

std::vector<std::unique_ptr<dispatch::Implementation>> make_lapack() {
  std::vector<std::unique_ptr<dispatch::Implementation>> out;
  out.push_back(row("lapack:potrf", {Routine::potrf, Routine::potrs}, by_dtype<Potrf>));
  out.push_back(row("lapack:getrf", {Routine::getrf, Routine::getrs, Routine::gesv, Routine::inv}, by_dtype<Getrf>));
  out.push_back(row("lapack:geqrf", {Routine::qr}, by_dtype<Geqrf>));
  out.push_back(row("lapack:syevd", {Routine::eigh}, by_dtype<Syevd>));
  out.push_back(row("lapack:gesdd", {Routine::svd}, by_dtype<Gesdd>));
  out.push_back(row("lapack:gels", {Routine::lstsq}, by_dtype<Gels>));
  return out;
}

}  // namespace bp::ops::linalg
