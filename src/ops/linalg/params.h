#pragma once
// The op "linalg" (docs/adding_an_op.md): torch.linalg's factorizations and
// solvers over float32 / float64 / complex64 / complex128, batched.
//
// Note [Linalg routines]
// Every entry (cholesky, solve, inv, lu, det, qr, eigh, svd, ...) reduces
// to one of a few LAPACK-shaped routines on a batch of matrices stored
// column-major (LAPACK's layout: element (i, j) of a matrix at i + j * rows),
// one after another (each output tensor's physical shape is
// [batch..., cols, rows]; its logical view is that tensor's .T()):
//   potrf  A n x n -> its Cholesky factor in the `upper` or lower triangle
//          (the other triangle zeroed); info
//   potrs  A = a factor, B n x k -> B = the solution of (L L^H) X = B
//   getrf  A m x n -> L\U (unit L below the diagonal), piv (1-based row
//          swaps, as LAPACK's ipiv); info (the first zero U[i, i], 1-based)
//   getrs  A = L\U, piv given, B -> B = the solution of A X = B (A^H X = B
//          when `adjoint`)
//   gesv   getrf, then getrs on B (solve)
//   inv    getrf, then getrs on B = I (inv)
//   qr     A m x n -> R in `r` (rows x n, zero below the diagonal) and,
//          when want_q, Q in `q` (m x q_cols) with Q R = A
//   eigh   A n x n Hermitian (read from the `upper` or lower triangle) ->
//          eigenvalues ascending in `w`, eigenvectors in A's columns when
//          want_vectors; info
//   svd    A m x n -> singular values descending in `w`, and when
//          want_vectors U in `u` (m x u_cols) and V^H in `vh` (vh_rows x n);
//          info
//   lstsq  A m x n, B m x k (in `b`, whose rows are max(m, n)) -> the
//          least-squares solution in b's first n rows, with the LAPACK
//          `driver` (gels, gelsy, gelsd, gelss) and `rcond`; rank in `rank`
//          and singular values in `w` where the driver gives them; for m > n
//          the squared residuals are the sum of |b|^2 over rows n..m-1
// The front end (linalg.cpp) has validated, broadcast and converted the
// inputs (a_in, b_in, piv_in: views of the full batch shape, in the
// computation dtype) and allocated every output. An implementation's run
// first loads the inputs into the outputs (load_inputs) and then works in
// place, so it is idempotent (autotuning runs it several times). A run never
// raises for a numerical failure: it writes `info` per matrix, and the
// entry's result raises or returns it (Note [Linalg errors]).

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backplane/op_spec.h"

namespace bp::ops::linalg {

enum class Routine : uint8_t { potrf, potrs, getrf, getrs, gesv, inv, qr, eigh, svd, lstsq };
const char* routine_name(Routine r);  // "potrf", ...

struct Params {
  Routine routine = Routine::potrf;
  std::string api;  // the name errors carry: "linalg.cholesky", "torch.linalg.solve"
  DType dtype = DType::f32;
  Device device = Device::cpu();
  Shape batch_shape;
  int64_t batch = 1, m = 0, n = 0, k = 0;  // A is m x n; B is (getrs, potrs, gesv, inv) n x k
  bool upper = false;         // potrf / potrs: the factor's triangle; eigh: UPLO = 'U'
  bool adjoint = false;       // getrs: A^H X = B
  bool want_vectors = true;   // eigh: eigenvectors; svd: U and V^H
  bool want_q = true;         // qr: mode != 'r'
  int64_t q_cols = 0;         // qr: Q's columns (min(m, n), or m when complete)
  int64_t r_rows = 0;         // qr: R's rows (min(m, n), or m when complete)
  int64_t u_cols = 0, vh_rows = 0;  // svd: min(m, n), or m and n with full_matrices
  std::string driver;               // svd on CUDA: cuSOLVER's gesvd / gesvdj / gesvda ("": chosen); lstsq's
  double rcond = 0;                 // lstsq: singular values below rcond * the largest count as zero

  Tensor a_in, b_in, piv_in;  // inputs, batch_shape + their matrix dims, dtype `dtype` (piv_in int32)
  // potrf of a dense row-major input (Note [Cholesky without a transpose]):
  // a holds a_in's memory as it is, `upper` is flipped, and the result's
  // logical view is a itself rather than a.T().
  bool a_row_major = false;
  // Outputs, column-major per matrix (physical [batch..., cols, rows]).
  Tensor a;     // A's work and result (m x n)
  Tensor b;     // the right-hand sides / solution / inverse (n x k)
  Tensor piv;   // int32 [batch..., min(m, n)]
  Tensor info;  // int32 [batch...]
  Tensor w;     // real [batch..., min(m, n)] (eigenvalues, singular values)
  Tensor q, r;  // qr
  Tensor u, vh; // svd
  Tensor rank;  // lstsq: int64 [batch...] (drivers gelsy, gelsd, gelss)
  // getrf for linalg.det: [batch...] of dtype. An implementation may also
  // write each matrix's determinant here and set det_written (builtin's
  // small path does, from the U diagonal it holds in registers, saving the
  // entry a second pass over the factors); otherwise the entry computes it
  // from a and piv. Either way the same product, in the same order.
  Tensor det;
  mutable bool det_written = false;

  int64_t min_mn() const { return m < n ? m : n; }
  bool is_real() const { return dtype == DType::f32 || dtype == DType::f64; }
};

// Note [Cholesky without a transpose]
// A dense row-major matrix read as column-major is A^T. For potrf that is
// enough: the lower triangle PyTorch reads (A[i][j], i >= j) is the upper
// triangle of A^T, and the upper factor U of the Hermitian matrix built from
// it is L^T (also for complex: conj(L)^H = L^T), which read back row-major
// is L itself. So cholesky copies the memory as it is and factors the other
// triangle, instead of a transposing copy that costs a sixth of the
// factorization of a 1024 x 1024 float32 matrix.

// The matrix of batch element `index` in a column-major output tensor.
template <class T>
T* matrix(const Tensor& t, int64_t index) {
  const int64_t rows = t.size(-1), cols = t.size(-2);
  return static_cast<T*>(t.data()) + index * rows * cols;
}
// The row count (LAPACK's leading dimension) of a column-major output, at
// least 1 (1 for an output the routine does not have).
inline int64_t ld(const Tensor& t) { return t.defined() && t.ndim() >= 2 && t.size(-1) > 0 ? t.size(-1) : 1; }

// Loads a_in / b_in / piv_in into a / b / piv (b = I for inv), so a run
// starts from the inputs however often it runs (layout.cpp). A run that
// reads a_in itself passes with_a = false; one that writes all of inv's b
// itself, with_identity = false.
void load_inputs(const Params& p, bool with_a = true, bool with_identity = true);
// After a factorization in a: zeroes the triangle the routine leaves
// (potrf: the other one) (layout.cpp).
void zero_other_triangle(const Params& p);
// Runs body(index) for every batch element, in parallel over the batch when
// there are several and each is small (layout.cpp).
void for_each_matrix(const Params& p, const std::function<void(int64_t)>& body);

// The problem dims of the op's signature: routine, batch, m, n, k.
enum LayoutBits : uint32_t { kUpper = 1u << 0, kVectors = 1u << 1, kFull = 1u << 2, kAdjoint = 1u << 3 };

// Declaration (op.cpp), front end (linalg.cpp), makers.
OpSpec spec();
dispatch::Op& linalg_op();
std::vector<EntrySpec> entries();
std::unique_ptr<dispatch::Implementation> make_blocked();  // linalg_blocked.cpp
std::unique_ptr<dispatch::Implementation> make_ref();      // linalg_ref.cpp
// lapack:potrf, lapack:getrf, lapack:geqrf, lapack:syevd, lapack:gesdd (linalg_lapack_openblas.cpp).
std::vector<std::unique_ptr<dispatch::Implementation>> make_lapack();

// A check "routine": the call's routine is one of `allowed`.
dispatch::Check<Params> routine_in(std::vector<Routine> allowed);

}  // namespace bp::ops::linalg
