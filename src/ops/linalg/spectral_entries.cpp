// The linalg entries built on QR, the Hermitian eigenproblem and the SVD:
// qr, eigh, eigvalsh, svd, svdvals, and matrix_rank and pinv composed from
// them (as PyTorch composes them); PyTorch's semantics and error texts.

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "backplane/ops/matmul.h"
#include "ops/linalg/entries.h"
#include "ops/linalg/front.h"

namespace bp::ops::linalg {
namespace {

// A column-major output of t's shape holding identity matrices: what the
// factors of a matrix with a zero dim are where they are square (a complete
// Q, full U and Vh), since no routine runs for it.
Tensor identity_like(const Tensor& t) {
  Tensor host = Tensor::zeros(t.shape(), t.dtype());
  const int64_t rows = t.size(-1), cols = t.size(-2);
  const int64_t count = rows * cols == 0 ? 0 : t.numel() / (rows * cols);
  visit_dtype(t.dtype(), [&](auto tag) {
    using E = decltype(tag);
    if constexpr (std::is_same_v<E, float> || std::is_same_v<E, double> || std::is_same_v<E, std::complex<float>> ||
                  std::is_same_v<E, std::complex<double>>) {
      for (int64_t b = 0; b < count; ++b)
        for (int64_t i = 0; i < std::min(rows, cols); ++i) host.data_ptr<E>()[b * rows * cols + i + i * rows] = E(1);
    }
  });
  return host.to(t.device());
}

bool has_zero_dim(const Params& q) { return q.m == 0 || q.n == 0; }

Call qr(const Tensor& a, const std::string& mode) {
  const std::string api = "linalg.qr";
  check_matrix(api, a);
  auto p = new_params(Routine::qr, api, a, batch_of(a));
  const int64_t k = p->min_mn();
  const bool complete = mode == "complete";
  p->want_q = mode != "r";
  p->q_cols = complete ? p->m : k;
  p->r_rows = complete ? p->m : k;
  p->r = column_major(p->batch_shape, p->r_rows, p->n, p->dtype, p->device);
  if (p->want_q) p->q = column_major(p->batch_shape, p->m, p->q_cols, p->dtype, p->device);
  return routine_call(p, [](const Params& q) -> ArgValue {
    if (has_zero_dim(q)) {  // nothing ran: R is empty or zero, a complete Q the identity
      const Tensor Q = q.want_q ? identity_like(q.q).T() : Tensor::empty({0}, q.dtype, q.device);
      return std::vector<Tensor>{Q, Tensor::zeros(q.r.shape(), q.dtype).to(q.device).T()};
    }
    const Tensor Q = q.want_q ? q.q.T() : Tensor::empty({0}, q.dtype, q.device);
    return std::vector<Tensor>{Q, q.r.T()};
  });
}

std::shared_ptr<Params> eigh_params(const Tensor& a, const std::string& api, const std::string& uplo, bool vectors) {
  check_square(api, a);
  auto p = new_params(Routine::eigh, api, a, batch_of(a));
  p->upper = uplo == "U";
  p->want_vectors = vectors;
  Shape ws = p->batch_shape;
  ws.push_back(p->n);
  p->w = Tensor::empty(ws, real_dtype(p->dtype), p->device);
  return p;
}

Call eigh(const Tensor& a, const std::string& uplo, bool vectors) {
  auto p = eigh_params(a, vectors ? "linalg.eigh" : "linalg.eigvalsh", uplo, vectors);
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [is_matrix](const Params& q) -> ArgValue {
    check_errors(q.info, q.api, is_matrix);
    if (!q.want_vectors) return q.w;
    return std::vector<Tensor>{q.w, q.a.T()};
  });
}

std::shared_ptr<Params> svd_params(const Tensor& a, const std::string& api, bool full, bool vectors,
                                   const std::string& driver) {
  check_matrix(api, a);
  if (!driver.empty() && a.device().is_cpu())
    throw_runtime(api, "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                       "backend.");
  auto p = new_params(Routine::svd, api, a, batch_of(a));
  const int64_t k = p->min_mn();
  p->want_vectors = vectors;
  p->driver = driver;
  p->u_cols = full ? p->m : k;
  p->vh_rows = full ? p->n : k;
  Shape ws = p->batch_shape;
  ws.push_back(k);
  p->w = Tensor::empty(ws, real_dtype(p->dtype), p->device);
  if (vectors) {
    p->u = column_major(p->batch_shape, p->m, p->u_cols, p->dtype, p->device);
    p->vh = column_major(p->batch_shape, p->vh_rows, p->n, p->dtype, p->device);
  }
  return p;
}

std::string driver_of(const Args& a) { return a.is_none("driver") ? std::string() : a.string("driver"); }

Call svd(const Tensor& a, bool full, bool vectors, const std::string& driver) {
  auto p = svd_params(a, vectors ? "linalg.svd" : "linalg.svdvals", full, vectors, driver);
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [is_matrix](const Params& q) -> ArgValue {
    check_errors(q.info, q.api, is_matrix);
    if (!q.want_vectors) return q.w;
    if (has_zero_dim(q)) return std::vector<Tensor>{identity_like(q.u).T(), q.w, identity_like(q.vh).T()};
    return std::vector<Tensor>{q.u.T(), q.w, q.vh.T()};
  });
}

// ---------------------------------------------------------------- matrix_rank, pinv

// The tolerance of matrix_rank and pinv for one matrix whose largest
// singular value (or |eigenvalue|) is `top`: max(atol, rtol * top), rtol
// defaulting to eps * max(m, n) unless atol > 0 was given (PyTorch's rule).
double tolerance(std::optional<double> atol, std::optional<double> rtol, DType dtype, int64_t m, int64_t n,
                 double top) {
  const double eps = real_dtype(dtype) == DType::f32 ? std::numeric_limits<float>::epsilon()
                                                      : std::numeric_limits<double>::epsilon();
  double r = 0;
  if (rtol) r = *rtol;
  else if (!(atol && *atol > 0)) r = eps * static_cast<double>(std::max(m, n));
  return std::max(atol.value_or(0.0), r * top);
}

void check_tolerances(const std::string& api, std::optional<double> atol, std::optional<double> rtol) {
  if ((atol && *atol < 0) || (rtol && *rtol < 0))
    throw_runtime(api, api + ": atol and rtol must be non-negative, got atol=" +
                           (atol ? std::to_string(*atol) : "None") + " and rtol=" +
                           (rtol ? std::to_string(*rtol) : "None"));
}

// The singular values (or |eigenvalues|, descending) of each matrix, as doubles.
std::vector<double> magnitudes(const Tensor& w, int64_t b, int64_t k, bool hermitian) {
  const Tensor host = w.to(Device::cpu()).to(DType::f64).contiguous();
  const double* x = host.data_ptr<double>() + b * k;
  std::vector<double> s(x, x + k);
  if (hermitian) {
    for (double& v : s) v = std::abs(v);
    std::sort(s.begin(), s.end(), std::greater<>());
  }
  return s;
}

std::shared_ptr<Params> spectrum_params(const Tensor& a, const std::string& api, bool hermitian, bool vectors) {
  return hermitian ? eigh_params(a, vectors ? "linalg.eigh" : "linalg.eigvalsh", "L", vectors)
                   : svd_params(a, vectors ? "linalg.svd" : "linalg.svdvals", false, vectors, "");
  (void)api;
}

Call matrix_rank(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const std::string api = "linalg.matrix_rank";
  check_matrix(api, a);
  check_tolerances(api, atol, rtol);
  auto p = spectrum_params(a, api, hermitian, false);
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [=](const Params& q) -> ArgValue {
    check_errors(q.info, q.api, is_matrix);
    const int64_t k = q.w.size(-1);
    Tensor rank = Tensor::empty(q.batch_shape, DType::i64);
    for (int64_t b = 0; b < q.batch; ++b) {
      const std::vector<double> s = magnitudes(q.w, b, k, hermitian);
      const double tol = tolerance(atol, rtol, q.dtype, q.m, q.n, s.empty() ? 0.0 : s[0]);
      rank.data_ptr<int64_t>()[b] = std::count_if(s.begin(), s.end(), [&](double v) { return v > tol; });
    }
    return rank.to(q.device);
  });
}

// Multiplies column j of every matrix of the contiguous t ([batch, rows, cols]) by f[b][j].
void scale_columns(Tensor& t, const std::vector<std::vector<double>>& f) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::complex<float>> ||
                  std::is_same_v<T, std::complex<double>>) {
      T* x = t.data_ptr<T>();
      for (std::size_t b = 0; b < f.size(); ++b)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) x[(static_cast<int64_t>(b) * rows + i) * cols + j] *= static_cast<decltype(std::real(T{}))>(f[b][j]);
    }
  });
}

Call pinv(const Tensor& a, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const std::string api = "linalg.pinv";
  check_matrix(api, a);
  check_tolerances(api, atol, rtol);
  auto p = spectrum_params(a, api, hermitian, true);
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [=](const Params& q) -> ArgValue {
    check_errors(q.info, q.api, is_matrix);
    const int64_t k = q.w.size(-1);
    const Tensor w = q.w.to(Device::cpu()).to(DType::f64).contiguous();
    std::vector<std::vector<double>> f(static_cast<std::size_t>(q.batch));
    for (int64_t b = 0; b < q.batch; ++b) {
      const std::vector<double> s = magnitudes(q.w, b, k, hermitian);
      const double tol = tolerance(atol, rtol, q.dtype, q.m, q.n, s.empty() ? 0.0 : s[0]);
      const double* x = w.data_ptr<double>() + b * k;
      for (int64_t j = 0; j < k; ++j) f[b].push_back(std::abs(x[j]) > tol ? 1.0 / x[j] : 0.0);
    }
    // A+ = V diag(1/s) U^H (hermitian: V diag(1/l) V^H).
    const Tensor left_t = hermitian ? q.a.T() : adjoint(q.vh.T());
    const Tensor right_t = hermitian ? adjoint(q.a.T()) : adjoint(q.u.T());
    Tensor scaled = left_t.to(Device::cpu()).clone();
    scale_columns(scaled, f);
    if (q.batch == 0 || k == 0) {
      Shape s = q.batch_shape;
      s.insert(s.end(), {q.n, q.m});
      return Tensor::zeros(s, q.dtype).to(q.device);
    }
    return bp::matmul(scaled.to(q.device), right_t);
  });
}

// ---------------------------------------------------------------- lstsq

Call lstsq(const Tensor& a, const Tensor& b, std::optional<double> rcond, const std::string& driver_arg) {
  const std::string api = "torch.linalg.lstsq";
  check_matrix(api, a);
  check_matrix(api, b, "B");
  check_same(api, a, "A", b, "B");
  if (a.size(-2) != b.size(-2))
    throw_runtime(api, api + ": input.size(-2) should match other.size(-2), got " + std::to_string(a.size(-2)) +
                           " and " + std::to_string(b.size(-2)));
  if (!a.device().is_cpu())
    throw_runtime(api, api + ": only the CPU is supported (cuSOLVER's least squares is not built)");
  const std::string driver = driver_arg.empty() ? "gelsy" : driver_arg;
  const Shape batch = broadcast_shapes(api, {{"A", batch_of(a)}, {"B", batch_of(b)}}, "batch dimensions that broadcast");
  auto p = new_params(Routine::lstsq, api, a, batch);
  p->driver = driver;
  p->k = b.size(-1);
  const int64_t mx = std::max(p->m, p->n), mn = p->min_mn();
  const double eps = real_dtype(p->dtype) == DType::f32 ? std::numeric_limits<float>::epsilon()
                                                        : std::numeric_limits<double>::epsilon();
  p->rcond = rcond ? *rcond : eps * static_cast<double>(mx);
  p->b_in = expand_batch(b, batch);
  p->b = column_major(batch, mx, p->k, p->dtype, p->device);
  if (driver != "gels") p->rank = Tensor::zeros(batch, DType::i64);
  if (driver == "gelsd" || driver == "gelss") {
    Shape ws = batch;
    ws.push_back(mn);
    p->w = Tensor::zeros(ws, real_dtype(p->dtype));
  }
  const bool is_matrix = a.ndim() == 2;
  return routine_call(p, [is_matrix](const Params& q) -> ArgValue {
    check_errors(q.info, q.api, is_matrix);
    const Tensor solution = q.b.slice(-1, 0, q.n).T();
    const Tensor none = Tensor::empty({0}, real_dtype(q.dtype));
    // Squared residuals: for m > n with a full-rank A, from rows n..m-1 (gelsy leaves none).
    Tensor residuals = none;
    bool full_rank = true;
    if (q.rank.defined()) {
      const int64_t* r = q.rank.data_ptr<int64_t>();
      for (int64_t i = 0; i < q.batch; ++i) full_rank = full_rank && r[i] == q.n;
    }
    if (q.m > q.n && q.driver != "gelsy" && full_rank && q.batch > 0) {
      const Tensor tail = q.b.slice(-1, q.n, q.m).contiguous();  // [batch..., k, m - n]
      Shape rs = q.batch_shape;
      rs.push_back(q.k);
      residuals = Tensor::zeros(rs, real_dtype(q.dtype));
      const int64_t len = q.m - q.n, count = q.batch * q.k;
      visit_dtype(q.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                      std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
          using R = decltype(std::abs(T{}));
          const T* x = tail.data_ptr<T>();
          R* out = residuals.data_ptr<R>();
          for (int64_t c = 0; c < count; ++c) {
            R sum = 0;
            for (int64_t i = 0; i < len; ++i) sum += std::norm(x[c * len + i]);
            out[c] = sum;
          }
        }
      });
    }
    const Tensor rank = q.rank.defined() ? q.rank : Tensor::empty({0}, DType::i64);
    const Tensor sv = q.w.defined() ? q.w : none;
    return std::vector<Tensor>{solution, residuals, rank, sv};
  });
}

EntrySpec entry(const std::string& name, std::string doc, std::vector<ArgSpec> args,
                std::function<Call(const Args&)> prepare) {
  EntrySpec e;
  e.name = name;
  e.python = "backplane." + name;
  e.doc = std::move(doc);
  e.args = std::move(args);
  e.prepare = std::move(prepare);
  return e;
}

ArgSpec driver_arg() {
  ArgSpec d = arg::choice("driver", {"gesvd", "gesvdj", "gesvda"}, "gesvd",
                          "cuSOLVER's SVD routine (CUDA inputs only; None: chosen by size)");
  d.accepts |= bit(ArgKind::none);
  d.default_value = ArgValue{};
  return arg::keyword_only(d);
}

ArgSpec uplo_arg() { return arg::choice("UPLO", {"L", "U"}, "L", "the triangle of A that is read"); }

std::vector<ArgSpec> tolerance_args() {
  return {arg::keyword_only(arg::optional_real("atol", "absolute tolerance (None: 0)")),
          arg::keyword_only(arg::optional_real("rtol", "relative tolerance (None: eps * max(m, n) unless atol > 0)")),
          arg::keyword_only(arg::boolean("hermitian", false, "A is Hermitian: eigenvalues instead of the SVD"))};
}

}  // namespace

std::vector<EntrySpec> spectral_entries() {
  std::vector<EntrySpec> out;
  out.push_back(entry("linalg.qr", "(Q, R) with A = Q R, as torch.linalg.qr (mode 'reduced', 'complete' or 'r').",
                      {arg::tensor("A"), arg::choice("mode", {"reduced", "complete", "r"}, "reduced",
                                                     "'reduced': Q m x k; 'complete': Q m x m; 'r': R only")},
                      [](const Args& a) { return qr(a.tensor("A"), a.string("mode")); }));
  out.push_back(entry("linalg.eigh", "(eigenvalues ascending, eigenvectors) of Hermitian matrices, as torch.linalg.eigh.",
                      {arg::tensor("A"), uplo_arg()},
                      [](const Args& a) { return eigh(a.tensor("A"), a.string("UPLO"), true); }));
  out.push_back(entry("linalg.eigvalsh", "The eigenvalues (ascending) of Hermitian matrices, as torch.linalg.eigvalsh.",
                      {arg::tensor("A"), uplo_arg()},
                      [](const Args& a) { return eigh(a.tensor("A"), a.string("UPLO"), false); }));
  out.push_back(entry("linalg.svd", "(U, S, Vh) with A = U diag(S) Vh, as torch.linalg.svd.",
                      {arg::tensor("A"), arg::boolean("full_matrices", true, "U m x m and Vh n x n (False: k columns / rows)"),
                       driver_arg()},
                      [](const Args& a) {
                        return svd(a.tensor("A"), a.boolean("full_matrices"), true, driver_of(a));
                      }));
  out.push_back(entry("linalg.svdvals", "The singular values (descending), as torch.linalg.svdvals.",
                      {arg::tensor("A"), driver_arg()},
                      [](const Args& a) { return svd(a.tensor("A"), false, false, driver_of(a)); }));
  ArgSpec lstsq_driver = arg::choice("driver", {"gels", "gelsy", "gelsd", "gelss"}, "gelsy",
                                     "LAPACK's driver (None: gelsy); rank needs gelsy, gelsd or gelss, singular "
                                     "values gelsd or gelss");
  lstsq_driver.accepts |= bit(ArgKind::none);
  lstsq_driver.default_value = ArgValue{};
  out.push_back(entry("linalg.lstsq", "(solution, residuals, rank, singular_values) of min ||A X - B||, as "
                                      "torch.linalg.lstsq.",
                      {arg::tensor("A"), arg::tensor("B"),
                       arg::optional_real("rcond", "singular values below rcond * the largest count as zero (None: "
                                                   "eps * max(m, n))"),
                       arg::keyword_only(lstsq_driver)},
                      [](const Args& a) {
                        return lstsq(a.tensor("A"), a.tensor("B"), a.optional_real("rcond"),
                                     a.is_none("driver") ? std::string() : a.string("driver"));
                      }));
  std::vector<ArgSpec> rank_args = {arg::tensor("A")};
  for (ArgSpec& s : tolerance_args()) rank_args.push_back(s);
  out.push_back(entry("linalg.matrix_rank", "The numerical rank: singular values above max(atol, rtol * largest), as "
                                            "torch.linalg.matrix_rank.",
                      rank_args, [](const Args& a) {
                        return matrix_rank(a.tensor("A"), a.optional_real("atol"), a.optional_real("rtol"),
                                           a.boolean("hermitian"));
                      }));
  out.push_back(entry("linalg.pinv", "The Moore-Penrose pseudo-inverse, from the SVD (or eigh with hermitian=True), "
                                     "as torch.linalg.pinv.",
                      rank_args, [](const Args& a) {
                        return pinv(a.tensor("A"), a.optional_real("atol"), a.optional_real("rtol"),
                                    a.boolean("hermitian"));
                      }));
  return out;
}

}  // namespace bp::ops::linalg
