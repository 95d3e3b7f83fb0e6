#pragma once
// The linalg front end's shared pieces (front.cpp): input checks with
// PyTorch's texts, column-major outputs, the call of a routine, and the
// error of a failed factorization (Note [Linalg errors]).

#include <functional>
#include <memory>
#include <string>

#include "ops/linalg/params.h"

namespace bp::ops::linalg {

// "Float", "Double", "ComplexFloat", "Long", ...: PyTorch's scalar type names.
std::string torch_dtype_name(DType t);

// The input checks of most entries: defined, at least 2 dims, a float or
// complex dtype of at least single precision (RuntimeError with PyTorch's text).
void check_matrix(const std::string& api, const Tensor& a, const char* name = "A");
// ... and square: "<api>: A must be batches of square matrices, but they are 2 by 3 matrices".
void check_square(const std::string& api, const Tensor& a, const char* name = "A");
// Same dtype and device for two inputs.
void check_same(const std::string& api, const Tensor& a, const char* an, const Tensor& b, const char* bn);

// The batch dims of a tensor holding matrices (all but the last two).
Shape batch_of(const Tensor& t, int64_t matrix_dims = 2);
// t with its batch dims broadcast to `batch` (a view).
Tensor expand_batch(const Tensor& t, const Shape& batch, int64_t matrix_dims = 2);
// A view of t with a size-1 dim inserted at `dim` (0 <= dim <= ndim).
Tensor unsqueeze(const Tensor& t, int64_t dim);
// t without its size-1 dim `dim` (a view).
Tensor squeeze(const Tensor& t, int64_t dim);
// The complex conjugate (a copy; real tensors come back as they are).
Tensor conj(const Tensor& t);
// The conjugate transpose of the last two dims (a copy for complex, a view for real).
Tensor adjoint(const Tensor& t);
// The real dtype of a computation dtype (c64 -> f32).
DType real_dtype(DType t);

// A column-major output: batch + [rows, cols] logically, stored as
// batch + [cols, rows] (Note [Linalg routines]); .T() of it is the logical view.
Tensor column_major(const Shape& batch, int64_t rows, int64_t cols, DType dtype, Device device);

// A Params for `routine` on A (already checked), batch `batch`, with a, info
// (zeros) allocated; the caller adds the rest.
std::shared_ptr<Params> new_params(Routine routine, std::string api, const Tensor& a, const Shape& batch);

// The call of a routine; result(p) builds what the entry returns.
Call routine_call(std::shared_ptr<Params> p, std::function<ArgValue(const Params&)> result);

// Note [Linalg errors]
// A failed factorization is never raised by a run: each matrix's LAPACK
// info lands in p.info, and the entry raises after the run as PyTorch's
// _linalg_check_errors does: LinAlgError (ErrorKind::LinAlg; in Python
// backplane.linalg.LinAlgError, a RuntimeError, as torch.linalg.LinAlgError;
// a negative info other than svd's is a plain RuntimeError) "<api>: <what>" for a single
// matrix, "<api>: (Batch element <i>): <what>" for the first failing one of
// a batch, the text chosen by the api's name (inv, solve, cholesky, svd,
// eig, lu_factor). The _ex entries return info instead, and raise the same
// way only with check_errors=True.
void check_errors(const Tensor& info, const std::string& api, bool is_matrix);

}  // namespace bp::ops::linalg
