// The linalg entries built on Cholesky and LU: cholesky, cholesky_ex,
// cholesky_solve, lu_factor, lu_factor_ex, lu, lu_solve, solve, solve_ex,
// inv, inv_ex, det, slogdet; PyTorch's semantics, argument names and error
// texts (Note [Linalg routines], Note [Linalg errors]).

#include <cmath>
#include <complex>

#include "ops/linalg/entries.h"
#include "ops/linalg/front.h"
#include "ops/linalg/small.h"

namespace bp::ops::linalg {
namespace {

Shape broadcast_batch(const std::string& api, std::vector<std::pair<std::string, Shape>> shapes) {
  return broadcast_shapes(api, shapes, "batch dimensions that broadcast");
}

// ---------------------------------------------------------------- Cholesky

Call cholesky(const Tensor& a, bool upper, const std::string& api, bool ex, bool check) {
  check_square(api, a);
  auto p = new_params(Routine::potrf, api, a, batch_of(a));
  // A dense CPU input is factored where its memory puts it (Note [Cholesky
  // without a transpose]); tiny ones keep the lower factor the small path serves.
  p->a_row_major = a.is_contiguous() && a.device().is_cpu() && a.size(-1) > kSmallN;
  p->upper = p->a_row_major ? !upper : upper;
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [ex, check, is_matrix](const Params& q) -> ArgValue {
    if (!ex || check) check_errors(q.info, q.api, is_matrix);
    const Tensor factor = q.a_row_major ? q.a : q.a.T();
    if (!ex) return factor;
    return std::vector<Tensor>{factor, q.info};
  });
}

Call cholesky_solve(const Tensor& b, const Tensor& l, bool upper) {
  const std::string api = "cholesky_solve";
  check_matrix(api, b, "B");
  check_square(api, l, "L");
  check_same(api, b, "B", l, "L");
  if (b.size(-2) != l.size(-1))
    throw_runtime(api, "Incompatible matrix sizes for cholesky_solve: each L matrix is " + std::to_string(l.size(-1)) +
                           " by " + std::to_string(l.size(-1)) + " but each B matrix is " +
                           std::to_string(b.size(-2)) + " by " + std::to_string(b.size(-1)));
  const Shape batch = broadcast_batch(api, {{"B", batch_of(b)}, {"L", batch_of(l)}});
  auto p = new_params(Routine::potrs, api, l, batch);
  p->upper = upper;
  p->k = b.size(-1);
  p->b_in = expand_batch(b, batch);
  p->b = column_major(batch, p->n, p->k, p->dtype, p->device);
  return routine_call(p, [](const Params& q) -> ArgValue { return q.b.T(); });
}

// ---------------------------------------------------------------- LU

std::shared_ptr<Params> lu_params(const Tensor& a, const std::string& api, bool pivot) {
  check_matrix(api, a);
  if (!pivot && a.device().is_cpu())
    throw_runtime(api, api + ": LU without pivoting is not implemented on the CPU");
  auto p = new_params(Routine::getrf, api, a, batch_of(a));
  Shape piv_shape = p->batch_shape;
  piv_shape.push_back(p->min_mn());
  p->piv = Tensor::zeros(piv_shape, DType::i32).to(p->device);
  return p;
}

Call lu_factor(const Tensor& a, bool pivot, bool ex, bool check) {
  const std::string api = ex ? "torch.linalg.lu_factor_ex" : "torch.linalg.lu_factor";
  auto p = lu_params(a, api, pivot);
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [ex, check, is_matrix](const Params& q) -> ArgValue {
    if (!ex || check) check_errors(q.info, q.api, is_matrix);
    if (!ex) return std::vector<Tensor>{q.a.T(), q.piv};
    return std::vector<Tensor>{q.a.T(), q.piv, q.info};
  });
}

// P, L, U of A = P L U from getrf's output.
template <class T>
std::vector<Tensor> unpack_lu(const Params& q) {
  const int64_t m = q.m, n = q.n, k = q.min_mn();
  Shape ps = q.batch_shape, ls = q.batch_shape, us = q.batch_shape;
  ps.insert(ps.end(), {m, m});
  ls.insert(ls.end(), {m, k});
  us.insert(us.end(), {k, n});
  Tensor P = Tensor::zeros(ps, q.dtype), L = Tensor::zeros(ls, q.dtype), U = Tensor::zeros(us, q.dtype);
  const Tensor lu = q.a.to(Device::cpu()), piv = q.piv.to(Device::cpu());
  std::vector<int64_t> perm(static_cast<std::size_t>(m));
  for (int64_t b = 0; b < q.batch; ++b) {
    const T* x = matrix<T>(lu, b);
    const int32_t* pv = piv.data_ptr<int32_t>() + b * k;
    T* pp = P.data_ptr<T>() + b * m * m;
    T* lp = L.data_ptr<T>() + b * m * k;
    T* up = U.data_ptr<T>() + b * k * n;
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[pv[i] - 1]);
    for (int64_t i = 0; i < m; ++i) pp[perm[i] * m + i] = T(1);  // row perm[i] of A is row i of L U
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < k; ++j) lp[i * k + j] = i == j ? T(1) : i > j ? x[i + j * m] : T(0);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = i; j < n; ++j) up[i * n + j] = x[i + j * m];
  }
  return {P.to(q.device), L.to(q.device), U.to(q.device)};
}

template <class Fn>
decltype(auto) visit_linalg(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn(float{});
    case DType::f64: return fn(double{});
    case DType::c64: return fn(std::complex<float>{});
    default: return fn(std::complex<double>{});
  }
}

Call lu(const Tensor& a, bool pivot) {
  auto p = lu_params(a, "linalg.lu", pivot);
  return routine_call(p, [](const Params& q) -> ArgValue {
    return visit_linalg(q.dtype, [&](auto tag) { return unpack_lu<decltype(tag)>(q); });
  });
}

std::string equation_shapes(const Tensor& a, const Tensor& b) {
  return "(" + std::to_string(a.size(-2)) + "x" + std::to_string(a.size(-1)) + " and " + std::to_string(b.size(-2)) +
         "x" + std::to_string(b.size(-1)) + ")";
}

Call lu_solve(const Tensor& lu_t, const Tensor& pivots, const Tensor& b, bool left, bool adj) {
  const std::string api = "linalg.lu_solve";
  check_square(api, lu_t, "LU");
  check_matrix(api, b, "B");
  check_same(api, lu_t, "LU", b, "B");
  if (!pivots.defined() || pivots.dtype() != DType::i32)
    throw_runtime(api, api + ": Expected pivots to be int32, got " +
                           (pivots.defined() ? torch_dtype_name(pivots.dtype()) : std::string("None")));
  if (pivots.ndim() < 1 || pivots.size(-1) != lu_t.size(-1))
    throw_runtime(api, api + ": Expected pivots of shape (*, " + std::to_string(lu_t.size(-1)) + "), got " +
                           pivots.str());
  const int64_t n = lu_t.size(-1);
  if ((left ? b.size(-2) : b.size(-1)) != n)
    throw_runtime(api, api + ": Incompatible shapes of A and B for the equation " + (left ? "AX = B " : "XA = B ") +
                           equation_shapes(lu_t, b));
  // XA = B is A^H X^H = B^H.
  const Tensor rhs = left ? b : adjoint(b);
  const Shape batch = broadcast_batch(api, {{"LU", batch_of(lu_t)}, {"pivots", batch_of(pivots, 1)},
                                            {"B", batch_of(rhs)}});
  auto p = new_params(Routine::getrs, api, lu_t, batch);
  p->adjoint = left ? adj : !adj;
  p->k = rhs.size(-1);
  p->b_in = expand_batch(rhs, batch);
  p->b = column_major(batch, n, p->k, p->dtype, p->device);
  p->piv_in = expand_batch(pivots, batch, 1);
  Shape ps = batch;
  ps.push_back(n);
  p->piv = Tensor::empty(ps, DType::i32, p->device);
  return routine_call(p, [left](const Params& q) -> ArgValue { return left ? q.b.T() : adjoint(q.b.T()); });
}

// ---------------------------------------------------------------- solve, inv

Call solve(const Tensor& a, const Tensor& b, bool left, bool ex, bool check) {
  const std::string api = ex ? "torch.linalg.solve_ex" : "torch.linalg.solve";
  check_square(api, a);
  if (!b.defined()) throw_bad_value(api + ": B", "None", "a Tensor");
  check_same(api, a, "A", b, "B");
  // B is a vector (or a batch of them) when it is 1-D or A's shape without its last dim.
  bool vector = b.ndim() == 1;
  if (!vector && b.ndim() == a.ndim() - 1)
    vector = std::equal(b.shape().begin(), b.shape().end(), a.shape().begin());
  if (b.ndim() < 1) throw_runtime(api, api + ": The input tensor B must have at least 1 dimensions.");
  Tensor bm = vector ? unsqueeze(b, left ? b.ndim() : b.ndim() - 1) : b;
  if (bm.ndim() < 2) throw_runtime(api, api + ": The input tensor B must have at least 2 dimensions.");
  const int64_t n = a.size(-1);
  if ((left ? bm.size(-2) : bm.size(-1)) != n)
    throw_runtime(api, api + ": Incompatible shapes of A and B for the equation " + (left ? "AX = B " : "XA = B ") +
                           equation_shapes(a, bm));
  // XA = B is A^T X^T = B^T.
  const Tensor at = left ? a : a.T();
  const Tensor bt = left ? bm : bm.T();
  const Shape batch = broadcast_batch(api, {{"A", batch_of(at)}, {"B", batch_of(bt)}});
  auto p = new_params(Routine::gesv, api, at, batch);
  p->k = bt.size(-1);
  p->b_in = expand_batch(bt, batch);
  p->b = column_major(batch, n, p->k, p->dtype, p->device);
  Shape ps = batch;
  ps.push_back(n);
  p->piv = Tensor::zeros(ps, DType::i32).to(p->device);
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [=](const Params& q) -> ArgValue {
    if (!ex || check) check_errors(q.info, q.api, is_matrix);
    Tensor x = left ? q.b.T() : q.b;
    if (vector) x = squeeze(x, left ? -1 : -2);
    if (!ex) return x;
    return std::vector<Tensor>{x, q.info};
  });
}

Call inv(const Tensor& a, bool ex, bool check) {
  const std::string api = ex ? "linalg.inv_ex" : "linalg.inv";
  check_square(api, a);
  auto p = new_params(Routine::inv, api, a, batch_of(a));
  p->k = p->n;
  p->b = column_major(p->batch_shape, p->n, p->n, p->dtype, p->device);
  Shape ps = p->batch_shape;
  ps.push_back(p->n);
  p->piv = Tensor::zeros(ps, DType::i32).to(p->device);
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [=](const Params& q) -> ArgValue {
    if (!ex || check) check_errors(q.info, q.api, is_matrix);
    if (!ex) return q.b.T();
    return std::vector<Tensor>{q.b.T(), q.info};
  });
}

// ---------------------------------------------------------------- det, slogdet

// The determinant (want_det: {det}) or the sign (a unit complex number for
// complex A, +-1 or 0 for real) and log|det| ({sign, logabsdet}) of each
// matrix from getrf's U diagonal and row swaps.
template <class T>
std::vector<Tensor> det_parts(const Params& q, bool want_det) {
  using R = decltype(std::abs(T{}));
  const Tensor lu = q.a.to(Device::cpu()), piv = q.piv.to(Device::cpu());
  Tensor first = Tensor::empty(q.batch_shape, q.dtype);
  const T* lu_base = lu.data_ptr<T>();
  const int32_t* piv_base = piv.data_ptr<int32_t>();
  T* first_base = first.data_ptr<T>();
  const int64_t n = q.n;
  // A row swap flips the sign: by a multiply, not a branch (random pivots mispredict it).
  auto flip = [](const int32_t* pv, int64_t i) { return T(static_cast<R>(1 - 2 * (pv[i] != i + 1))); };
  if (want_det && q.det_written) return {q.det};
  if (want_det) {  // no logarithms: they cost more than the factorization of a 4 x 4
    for (int64_t b = 0; b < q.batch; ++b) {
      const T* x = lu_base + b * n * n;
      const int32_t* pv = piv_base + b * n;
      T det(1);
      for (int64_t i = 0; i < n; ++i) det *= x[i + i * n] * flip(pv, i);
      first_base[b] = det;
    }
    return {first.to(q.device)};
  }
  Tensor logabs = Tensor::empty(q.batch_shape, real_dtype(q.dtype));
  R* logabs_base = logabs.data_ptr<R>();
  for (int64_t b = 0; b < q.batch; ++b) {
    const T* x = lu_base + b * n * n;
    const int32_t* pv = piv_base + b * n;
    T sign(1);
    R log_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T d = x[i + i * n];
      sign *= flip(pv, i);
      const R mag = std::abs(d);
      if (mag == R(0)) {
        sign = T(0);
        log_sum = -std::numeric_limits<R>::infinity();
      } else {
        sign *= d / T(mag);
        log_sum += std::log(mag);
      }
    }
    first_base[b] = sign;
    logabs_base[b] = log_sum;
  }
  return {first.to(q.device), logabs.to(q.device)};
}

Call det(const Tensor& a, bool log) {
  const std::string api = log ? "linalg.slogdet" : "linalg.det";
  check_square(api, a);
  auto p = new_params(Routine::getrf, api, a, batch_of(a));
  Shape ps = p->batch_shape;
  ps.push_back(p->n);
  p->piv = Tensor::zeros(ps, DType::i32).to(p->device);
  if (!log && p->device.is_cpu()) p->det = Tensor::empty(p->batch_shape, p->dtype);
  Call c = routine_call(p, [log](const Params& q) -> ArgValue {
    std::vector<Tensor> parts =
        visit_linalg(q.dtype, [&](auto tag) { return det_parts<decltype(tag)>(q, !log); });
    if (log) return parts;
    return parts[0];
  });
  if (p->n == 0) {  // the determinant of a 0 x 0 matrix is 1
    c.result = [p, log]() -> ArgValue {
      Tensor one = Tensor::empty(p->batch_shape, p->dtype), zero = Tensor::zeros(p->batch_shape, real_dtype(p->dtype));
      visit_linalg(p->dtype, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < one.numel(); ++i) one.data_ptr<T>()[i] = T(1);
      });
      if (log) return std::vector<Tensor>{one, zero};
      return one;
    };
  }
  return c;
}

EntrySpec entry(const std::string& name, std::string doc, std::vector<ArgSpec> args,
                std::function<Call(const Args&)> prepare, const std::string& python = "") {
  EntrySpec e;
  e.name = name;
  e.python = python.empty() ? "backplane." + name : python;
  e.doc = std::move(doc);
  e.args = std::move(args);
  e.prepare = std::move(prepare);
  return e;
}

ArgSpec kw_bool(const char* name, bool fallback, const char* doc) {
  return arg::keyword_only(arg::boolean(name, fallback, doc));
}

}  // namespace

std::vector<EntrySpec> factor_entries() {
  std::vector<EntrySpec> out;
  const char* upper_doc = "use (and return) the upper factor U, A = U^H U, instead of the lower L, A = L L^H";
  const char* check_doc = "raise for a failed factorization, as the entry without _ex does";
  out.push_back(entry(
      "linalg.cholesky", "The Cholesky factor of Hermitian positive-definite matrices, as torch.linalg.cholesky.",
      {arg::tensor("A"), kw_bool("upper", false, upper_doc)},
      [](const Args& a) { return cholesky(a.tensor("A"), a.boolean("upper"), "linalg.cholesky", false, false); }));
  out.push_back(entry(
      "linalg.cholesky_ex", "cholesky returning (L, info) without raising, as torch.linalg.cholesky_ex.",
      {arg::tensor("A"), kw_bool("upper", false, upper_doc), kw_bool("check_errors", false, check_doc)},
      [](const Args& a) {
        return cholesky(a.tensor("A"), a.boolean("upper"), "linalg.cholesky_ex", true, a.boolean("check_errors"));
      }));
  out.push_back(entry(
      "cholesky_solve", "X with A X = B given A's Cholesky factor (L, or U with upper=True), as torch.cholesky_solve.",
      {arg::tensor("B"), arg::tensor("L"), arg::boolean("upper", false, "L holds the upper factor U")},
      [](const Args& a) { return cholesky_solve(a.tensor("B"), a.tensor("L"), a.boolean("upper")); },
      "backplane.cholesky_solve"));
  const char* pivot_doc = "partial pivoting (False is not implemented on the CPU)";
  out.push_back(entry("linalg.lu_factor", "(LU, pivots) of A = P L U, as torch.linalg.lu_factor.",
                      {arg::tensor("A"), kw_bool("pivot", true, pivot_doc)},
                      [](const Args& a) { return lu_factor(a.tensor("A"), a.boolean("pivot"), false, false); }));
  out.push_back(entry(
      "linalg.lu_factor_ex", "(LU, pivots, info) without raising, as torch.linalg.lu_factor_ex.",
      {arg::tensor("A"), kw_bool("pivot", true, pivot_doc), kw_bool("check_errors", false, check_doc)},
      [](const Args& a) {
        return lu_factor(a.tensor("A"), a.boolean("pivot"), true, a.boolean("check_errors"));
      }));
  out.push_back(entry("linalg.lu", "(P, L, U) with A = P L U, as torch.linalg.lu.",
                      {arg::tensor("A"), kw_bool("pivot", true, pivot_doc)},
                      [](const Args& a) { return lu(a.tensor("A"), a.boolean("pivot")); }));
  out.push_back(entry(
      "linalg.lu_solve", "X with A X = B (or X A = B, A^H X = B) from lu_factor's output, as torch.linalg.lu_solve.",
      {arg::tensor("LU"), arg::tensor("pivots"), arg::tensor("B"), kw_bool("left", true, "solve A X = B (False: X A = B)"),
       kw_bool("adjoint", false, "solve with A^H")},
      [](const Args& a) {
        return lu_solve(a.tensor("LU"), a.tensor("pivots"), a.tensor("B"), a.boolean("left"), a.boolean("adjoint"));
      }));
  out.push_back(entry("linalg.solve", "X with A X = B (left=False: X A = B), as torch.linalg.solve.",
                      {arg::tensor("A"), arg::tensor("B"), kw_bool("left", true, "solve A X = B (False: X A = B)")},
                      [](const Args& a) {
                        return solve(a.tensor("A"), a.tensor("B"), a.boolean("left"), false, false);
                      }));
  out.push_back(entry("linalg.solve_ex", "(result, info) of solve without raising, as torch.linalg.solve_ex.",
                      {arg::tensor("A"), arg::tensor("B"), kw_bool("left", true, "solve A X = B (False: X A = B)"),
                       kw_bool("check_errors", false, check_doc)},
                      [](const Args& a) {
                        return solve(a.tensor("A"), a.tensor("B"), a.boolean("left"), true, a.boolean("check_errors"));
                      }));
  out.push_back(entry("linalg.inv", "The inverse of square matrices, as torch.linalg.inv.", {arg::tensor("A")},
                      [](const Args& a) { return inv(a.tensor("A"), false, false); }));
  out.push_back(entry("linalg.inv_ex", "(inverse, info) without raising, as torch.linalg.inv_ex.",
                      {arg::tensor("A"), kw_bool("check_errors", false, check_doc)},
                      [](const Args& a) { return inv(a.tensor("A"), true, a.boolean("check_errors")); }));
  out.push_back(entry("linalg.det", "The determinant of square matrices, as torch.linalg.det.", {arg::tensor("A")},
                      [](const Args& a) { return det(a.tensor("A"), false); }));
  out.push_back(entry("linalg.slogdet", "(sign, logabsdet) of the determinant, as torch.linalg.slogdet.",
                      {arg::tensor("A")}, [](const Args& a) { return det(a.tensor("A"), true); }));
  return out;
}

}  // namespace bp::ops::linalg
