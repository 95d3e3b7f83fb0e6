// The matmul front end: torch.matmul semantics (1-D and N-D, batch
// broadcasting), addmm and linear, all reduced to one batched problem
// (Note [Matmul params]) and handed to dispatch.
//
// How to add an op like this one: 1. create src/ops/<op>/ with params.h (the
// parameter struct and problem_of), checks.h/.cpp, impl_list.h/.cpp (define
// the op with dispatch::define_op, add its implementations in order, the
// reference last) and one <op>_<library>.cpp per implementation; 2. write
// this front end: validate, build params, dispatch::execute; 3. register an
// explainer (bottom of this file) so explain works from Python and the CLI;
// 4. add the public header include/backplane/ops/<op>.h, bindings, and a
// bench plug-in (tools/backplane/bench_<op>.cpp) with shapes in
// bench/shapes/<op>/. docs/dispatch.md has the longer version.

#include "backplane/ops/matmul.h"

#include <algorithm>
#include <cstring>

#include "core/tensor_internal.h"
#include "core/threads.h"
#include "ops/matmul/impl_list.h"
#include "ops/matmul/params.h"

namespace bp {
namespace {

using ops::matmul::Params;

void check_tensor(const char* op, const char* name, const Tensor& t) {
  if (!t.defined()) throw_bad_value(op, std::string(name) + " undefined", std::string("a defined tensor for ") + name);
  if (!is_floating(t.dtype()))
    throw_bad_value(op, std::string(name) + " of dtype " + dtype_name(t.dtype()),
                    "float16, bfloat16, float32 or float64 tensors");
}

void check_same(const char* op, const char* an, const Tensor& a, const char* bn, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw_bad_value(op, std::string(an) + " " + dtype_name(a.dtype()) + " and " + bn + " " + dtype_name(b.dtype()),
                    "tensors of one dtype (convert with .to(dtype))");
  if (a.device() != b.device())
    throw_bad_value(op, std::string(an) + " on " + a.device().str() + " and " + bn + " on " + b.device().str(),
                    "tensors on one device");
}

// NumPy broadcasting of two shapes; ValueError naming both when impossible.
Shape broadcast(const char* op, const char* what, const Shape& x, const Shape& y) {
  const std::size_t n = std::max(x.size(), y.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t a = i < n - x.size() ? 1 : x[i - (n - x.size())];
    const int64_t b = i < n - y.size() ? 1 : y[i - (n - y.size())];
    if (a != b && a != 1 && b != 1)
      throw_bad_value(op, std::string(what) + " " + detail::shape_str(x) + " and " + detail::shape_str(y),
                      "broadcastable shapes (each dim equal, or 1)");
    out[i] = a == 1 ? b : a;
  }
  return out;
}

// A view of t with its shape broadcast to `shape` (stride 0 where t has size
// 1 or lacks the dim): nothing is copied.
Tensor expand(const Tensor& t, const Shape& shape) {
  Shape strides(shape.size(), 0);
  const std::size_t lead = shape.size() - static_cast<std::size_t>(t.ndim());
  for (std::size_t i = lead; i < shape.size(); ++i) {
    const int64_t d = static_cast<int64_t>(i - lead);
    strides[i] = t.size(d) == 1 && shape[i] != 1 ? 0 : t.stride(d);
  }
  return Tensor::from_storage(t.storage(), shape, strides, t.storage_offset(), t.dtype());
}

// a view of a 1-D tensor as a [1, k] row or a [k, 1] column.
Tensor as_matrix(const Tensor& v, bool row) {
  const int64_t k = v.size(0), s = v.stride(0);
  return row ? Tensor::from_storage(v.storage(), {1, k}, {k * s, s}, v.storage_offset(), v.dtype())
             : Tensor::from_storage(v.storage(), {k, 1}, {s, 1}, v.storage_offset(), v.dtype());
}

// matmul's shape rules; `result` receives the shape the caller sees.
Params make_params(const char* op, const Tensor& a_in, const Tensor& b_in, Shape& result) {
  check_tensor(op, "a", a_in);
  check_tensor(op, "b", b_in);
  check_same(op, "a", a_in, "b", b_in);
  if (a_in.ndim() == 0 || b_in.ndim() == 0)
    throw_bad_value(op, "a " + detail::shape_str(a_in.shape()) + " and b " + detail::shape_str(b_in.shape()),
                    "tensors with at least 1 dimension (0-d tensors cannot be multiplied)");
  const Tensor a = a_in.ndim() == 1 ? as_matrix(a_in, true) : a_in;
  const Tensor b = b_in.ndim() == 1 ? as_matrix(b_in, false) : b_in;
  if (a.size(-1) != b.size(-2))
    throw_bad_value(op, "shapes " + detail::shape_str(a_in.shape()) + " and " + detail::shape_str(b_in.shape()) + " (" +
                            std::to_string(a.size(-1)) + " != " + std::to_string(b.size(-2)) + ")",
                    "a's last dimension equal to b's " + std::string(b_in.ndim() == 1 ? "only" : "second-to-last") +
                        " dimension");
  Params p;
  p.dtype = a.dtype();
  p.device = a.device();
  p.m = a.size(-2);
  p.k = a.size(-1);
  p.n = b.size(-1);
  p.batch_shape = broadcast(op, "batch shapes", Shape(a.shape().begin(), a.shape().end() - 2),
                            Shape(b.shape().begin(), b.shape().end() - 2));
  p.batch = 1;
  for (int64_t d : p.batch_shape) p.batch *= d;
  Shape a_shape = p.batch_shape, b_shape = p.batch_shape, out_shape = p.batch_shape;
  a_shape.insert(a_shape.end(), {p.m, p.k});
  b_shape.insert(b_shape.end(), {p.k, p.n});
  out_shape.insert(out_shape.end(), {p.m, p.n});
  p.a = expand(a, a_shape);
  p.b = expand(b, b_shape);
  p.out = Tensor::empty(out_shape, p.dtype, p.device);
  result = p.batch_shape;
  if (a_in.ndim() > 1) result.push_back(p.m);
  if (b_in.ndim() > 1) result.push_back(p.n);
  return p;
}

void attach_bias(const char* op, Params& p, const Tensor& bias, double beta, double alpha) {
  p.alpha = alpha;
  p.beta = bias.defined() ? beta : 0.0;
  if (!bias.defined()) return;
  check_tensor(op, "bias", bias);
  check_same(op, "bias", bias, "a", p.a);
  const Shape& out = p.out.shape();
  bool fits = bias.ndim() <= static_cast<int64_t>(out.size());
  for (int64_t i = 1; fits && i <= bias.ndim(); ++i)
    fits = bias.size(-i) == 1 || bias.size(-i) == out[out.size() - static_cast<std::size_t>(i)];
  if (!fits)
    throw_bad_value(op, "bias " + detail::shape_str(bias.shape()) + " for a product of shape " + detail::shape_str(out),
                    "a bias broadcastable to the product's shape");
  p.bias = expand(bias, out);
}

Tensor run(Params& p, const Shape& result) {
  if (p.out.numel() > 0) {
    threads::apply_num_threads_to_this_thread();
    if (p.k == 0) {
      // An empty sum: out = beta * bias, or zeros.
      ops::matmul::for_each_gemm(p, [&](const ops::matmul::Gemm2D& g) {
        if (g.beta != 0) return;
        const std::size_t bytes = (p.dtype == DType::f64 ? 8 : 4) * static_cast<std::size_t>(p.m * p.n);
        std::memset(g.c, 0, bytes);
      });
    } else {
      dispatch::execute(ops::matmul::matmul_op(), ops::matmul::problem_of(p), &p);
    }
  }
  return p.out.reshape(result);
}

dispatch::Decision explain_params(const Params& p) {
  return dispatch::explain(ops::matmul::matmul_op(), ops::matmul::problem_of(p), &p);
}

void check_2d(const char* op, const char* name, const Tensor& t) {
  check_tensor(op, name, t);
  if (t.ndim() != 2)
    throw_bad_value(op, std::string(name) + " " + detail::shape_str(t.shape()), std::string("a 2-D ") + name);
}

Params addmm_params(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha, Shape& result) {
  check_2d("addmm", "a", a);
  check_2d("addmm", "b", b);
  Params p = make_params("addmm", a, b, result);
  if (!bias.defined()) throw_bad_value("addmm", "bias undefined", "a defined bias tensor");
  attach_bias("addmm", p, bias, beta, alpha);
  return p;
}

Params linear_params(const Tensor& x, const Tensor& weight, const Tensor& bias, Shape& result) {
  check_2d("linear", "weight", weight);
  check_tensor("linear", "x", x);
  if (x.ndim() == 0 || x.size(-1) != weight.size(1))
    throw_bad_value("linear", "x " + detail::shape_str(x.shape()) + " and weight " + detail::shape_str(weight.shape()),
                    "x's last dimension equal to weight's in_features (weight.shape[1])");
  Params p = make_params("linear", x, weight.T(), result);
  if (bias.defined() && bias.ndim() != 1)
    throw_bad_value("linear", "bias " + detail::shape_str(bias.shape()), "a 1-D bias of out_features elements");
  attach_bias("linear", p, bias, 1.0, 1.0);
  return p;
}

double option(const std::map<std::string, double>& options, const char* name, double fallback) {
  auto it = options.find(name);
  return it == options.end() ? fallback : it->second;
}

void check_arg_count(const char* op, const std::vector<Tensor>& args, std::size_t lo, std::size_t hi,
                     const char* form) {
  if (args.size() < lo || args.size() > hi)
    throw_bad_value(std::string("explain(") + op + ")", std::to_string(args.size()) + " tensors", form);
}

[[maybe_unused]] const bool explainers_registered = [] {
  dispatch::register_explainer("matmul", [](const std::vector<Tensor>& t, const std::map<std::string, double>&) {
    check_arg_count("matmul", t, 2, 2, "2 tensors (a, b)");
    return explain_matmul(t[0], t[1]);
  });
  dispatch::register_explainer("addmm", [](const std::vector<Tensor>& t, const std::map<std::string, double>& o) {
    check_arg_count("addmm", t, 3, 3, "3 tensors (bias, a, b)");
    return explain_addmm(t[0], t[1], t[2], option(o, "beta", 1.0), option(o, "alpha", 1.0));
  });
  dispatch::register_explainer("linear", [](const std::vector<Tensor>& t, const std::map<std::string, double>&) {
    check_arg_count("linear", t, 2, 3, "2 or 3 tensors (x, weight[, bias])");
    return explain_linear(t[0], t[1], t.size() == 3 ? t[2] : Tensor());
  });
  return true;
}();

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  Shape result;
  Params p = make_params("matmul", a, b, result);
  return run(p, result);
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha) {
  Shape result;
  Params p = addmm_params(bias, a, b, beta, alpha, result);
  return run(p, result);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  Shape result;
  Params p = linear_params(x, weight, bias, result);
  return run(p, result);
}

dispatch::Decision explain_matmul(const Tensor& a, const Tensor& b) {
  Shape result;
  return explain_params(make_params("matmul", a, b, result));
}

dispatch::Decision explain_addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha) {
  Shape result;
  return explain_params(addmm_params(bias, a, b, beta, alpha, result));
}

dispatch::Decision explain_linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  Shape result;
  return explain_params(linear_params(x, weight, bias, result));
}

}  // namespace bp
