// The linalg front end's shared pieces (front.h).

#include "ops/linalg/front.h"

#include <complex>

namespace bp::ops::linalg {

std::string torch_dtype_name(DType t) {
  switch (t) {
    case DType::f16: return "Half";
    case DType::bf16: return "BFloat16";
    case DType::f32: return "Float";
    case DType::f64: return "Double";
    case DType::c64: return "ComplexFloat";
    case DType::c128: return "ComplexDouble";
    case DType::i8: return "Char";
    case DType::i32: return "Int";
    case DType::i64: return "Long";
    case DType::boolean: return "Bool";
  }
  return "?";
}

void check_matrix(const std::string& api, const Tensor& a, const char* name) {
  if (!a.defined()) throw_bad_value(api + ": " + name, "None", "a Tensor");
  if (a.ndim() < 2)
    throw_runtime(api, api + ": The input tensor " + name + " must have at least 2 dimensions.");
  const DType t = a.dtype();
  // NotImplementedError, as PyTorch's dtype dispatch raises for these.
  if (t == DType::f16 || t == DType::bf16)
    throw_not_implemented(api, api + ": Low precision dtypes not supported. Got " + torch_dtype_name(t));
  if (t != DType::f32 && t != DType::f64 && t != DType::c64 && t != DType::c128)
    throw_not_implemented(api,
                          api + ": Expected a floating point or complex tensor as input. Got " + torch_dtype_name(t));
}

void check_square(const std::string& api, const Tensor& a, const char* name) {
  check_matrix(api, a, name);
  if (a.size(-1) != a.size(-2))
    throw_runtime(api, api + ": " + name + " must be batches of square matrices, but they are " +
                           std::to_string(a.size(-2)) + " by " + std::to_string(a.size(-1)) + " matrices");
}

void check_same(const std::string& api, const Tensor& a, const char* an, const Tensor& b, const char* bn) {
  if (a.dtype() != b.dtype())
    throw_runtime(api, api + ": Expected " + an + " and " + bn + " to have the same dtype, but found " + an +
                           " of type " + torch_dtype_name(a.dtype()) + " and " + bn + " of type " +
                           torch_dtype_name(b.dtype()) + " instead.");
  if (!(a.device() == b.device()))
    throw_runtime(api, api + ": Expected " + an + " and " + bn + " to be on the same device, but found " + an +
                           " on " + a.device().str() + " and " + bn + " on " + b.device().str() + " instead.");
}

Shape batch_of(const Tensor& t, int64_t matrix_dims) {
  return Shape(t.shape().begin(), t.shape().end() - matrix_dims);
}

Tensor expand_batch(const Tensor& t, const Shape& batch, int64_t matrix_dims) {
  Shape target = batch;
  for (int64_t d = t.ndim() - matrix_dims; d < t.ndim(); ++d) target.push_back(t.size(d));
  return t.expand(target);
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  Shape shape = t.shape(), strides = t.strides();
  const int64_t stride = dim < t.ndim() ? t.stride(dim) * t.size(dim) : 1;
  shape.insert(shape.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return Tensor::from_storage(t.storage(), shape, strides, t.storage_offset(), t.dtype());
}

Tensor squeeze(const Tensor& t, int64_t dim) { return t.select(dim, 0); }

Tensor conj(const Tensor& t) {
  if (!is_complex(t.dtype())) return t;
  Tensor c = t.device().is_cpu() ? t.clone() : t.to(Device::cpu()).clone();
  const int64_t n = c.numel();
  if (c.dtype() == DType::c64) {
    auto* p = c.data_ptr<std::complex<float>>();
    for (int64_t i = 0; i < n; ++i) p[i] = std::conj(p[i]);
  } else {
    auto* p = c.data_ptr<std::complex<double>>();
    for (int64_t i = 0; i < n; ++i) p[i] = std::conj(p[i]);
  }
  return t.device().is_cpu() ? c : c.to(t.device());
}

Tensor adjoint(const Tensor& t) { return conj(t.T()); }

DType real_dtype(DType t) {
  return t == DType::c64 ? DType::f32 : t == DType::c128 ? DType::f64 : t;
}

Tensor column_major(const Shape& batch, int64_t rows, int64_t cols, DType dtype, Device device) {
  Shape physical = batch;
  physical.push_back(cols);
  physical.push_back(rows);
  return Tensor::empty(physical, dtype, device);
}

std::shared_ptr<Params> new_params(Routine routine, std::string api, const Tensor& a, const Shape& batch) {
  auto p = std::make_shared<Params>();
  p->routine = routine;
  p->api = std::move(api);
  p->dtype = a.dtype();
  p->device = a.device();
  p->batch_shape = batch;
  p->batch = 1;
  for (int64_t s : batch) p->batch *= s;
  p->m = a.size(-2);
  p->n = a.size(-1);
  p->a_in = expand_batch(a, batch);
  p->a = column_major(batch, p->m, p->n, p->dtype, p->device);
  p->info = Tensor::zeros(batch, DType::i32).to(p->device);
  return p;
}

Call routine_call(std::shared_ptr<Params> p, std::function<ArgValue(const Params&)> result) {
  uint32_t layout = 0;
  if (p->upper) layout |= kUpper;
  if (p->want_vectors && (p->routine == Routine::eigh || p->routine == Routine::svd)) layout |= kVectors;
  if (p->u_cols == p->m && p->vh_rows == p->n && p->routine == Routine::svd) layout |= kFull;
  if (p->routine == Routine::qr && p->q_cols == p->m) layout |= kFull;
  if (p->adjoint) layout |= kAdjoint;
  Call c;
  c.op = &linalg_op();
  c.problem = linalg_op().problem(p->device, p->dtype, layout,
                                  {static_cast<int64_t>(p->routine), p->batch, p->m, p->n, p->k});
  c.params = p;
  c.compute = p->batch > 0 && p->m > 0 && p->n > 0;
  c.result = [p, result] { return result(*p); };
  return c;
}

void check_errors(const Tensor& info, const std::string& api, bool is_matrix) {
  const Tensor host = info.device().is_cpu() ? info.contiguous() : info.to(Device::cpu());
  const int32_t* v = host.data_ptr<int32_t>();
  const int64_t count = host.numel();
  int64_t at = -1;
  for (int64_t i = 0; i < count && at < 0; ++i)
    if (v[i] != 0) at = i;
  if (at < 0) return;
  const int32_t code = v[at];
  const std::string where = api + (is_matrix ? "" : ": (Batch element " + std::to_string(at) + ")") + ": ";
  const std::string c = std::to_string(code);
  auto has = [&](const char* s) { return api.find(s) != std::string::npos; };
  std::string what;
  if (code < 0) {
    what = has("svd") ? "The algorithm failed to converge because the input matrix contained non-finite values."
                      : "Argument " + std::to_string(-code) +
                            " has illegal value. Most certainly there is a bug in the implementation calling the "
                            "backend library.";
  } else if (has("inv")) {
    what = "The diagonal element " + c +
           " is zero, the inversion could not be completed because the input matrix is singular.";
  } else if (has("solve")) {
    what = "The solver failed because the input matrix is singular.";
  } else if (has("cholesky")) {
    what = "The factorization could not be completed because the input is not positive-definite (the leading minor "
           "of order " + c + " is not positive-definite).";
  } else if (has("svd")) {
    what = "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "singular values (error code: " + c + ").";
  } else if (has("eig")) {
    what = "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "eigenvalues (error code: " + c + ").";
  } else if (has("lu_factor")) {
    what = "U[" + c + "," + c + "] is zero and using it on lu_solve would result in a division by zero. If you "
           "still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
           "linalg.lu_factor_ex(A, pivot)";
  } else {
    what = "Unknown error code: " + c + ".";
  }
  // PyTorch raises torch.linalg.LinAlgError for a numerical failure and for
  // svd's non-finite input; any other negative info is an internal error there.
  if (code < 0 && !has("svd")) throw_runtime(api, where + what);
  throw_linalg(api, where + what);
}

}  // namespace bp::ops::linalg
