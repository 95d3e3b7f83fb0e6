// The matmul front end: torch.matmul semantics (1-D and N-D, batch
// broadcasting), addmm and linear, all reduced to one batched problem
// (Note [Matmul params]) and handed to dispatch; op.cpp declares the op and
// its entries (docs/adding_an_op.md).

#include "backplane/ops/matmul.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/tensor_internal.h"
#include "ops/matmul/front.h"
#include "ops/matmul/impls.h"
#include "ops/matmul/params.h"

namespace bp {
namespace {

using ops::matmul::Params;

// Floats, complex (no conjugation, as torch.matmul) and the integers
// PyTorch multiplies on the CPU (exact, wrapping as two's complement does:
// only ref:any takes them).
void check_tensor(const char* op, const char* name, const Tensor& t) {
  if (!t.defined()) throw_bad_value(op, std::string(name) + " undefined", std::string("a defined tensor for ") + name);
  if (!is_floating(t.dtype()) && !is_complex(t.dtype()) && !is_integral(t.dtype()))
    throw_bad_value(op, std::string(name) + " of dtype " + dtype_name(t.dtype()),
                    "float16, bfloat16, float32, float64, complex64, complex128, int8, int32 or int64 tensors");
}

void check_same(const char* op, const char* an, const Tensor& a, const char* bn, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw_bad_value(op, std::string(an) + " " + dtype_name(a.dtype()) + " and " + bn + " " + dtype_name(b.dtype()),
                    "tensors of one dtype (convert with .to(dtype))");
  if (a.device() != b.device())
    throw_bad_value(op, std::string(an) + " on " + a.device().str() + " and " + bn + " on " + b.device().str(),
                    "tensors on one device");
}

// a view of a 1-D tensor as a [1, k] row or a [k, 1] column.
Tensor as_matrix(const Tensor& v, bool row) {
  const int64_t k = v.size(0), s = v.stride(0);
  return row ? Tensor::from_storage(v.storage(), {1, k}, {k * s, s}, v.storage_offset(), v.dtype())
             : Tensor::from_storage(v.storage(), {k, 1}, {s, 1}, v.storage_offset(), v.dtype());
}

// The row stride of t's dims [0, last] merged into one (each stride equal to
// the next dim's size times its stride; size-1 dims need nothing), or -1 when
// they do not merge. All of size 1: any stride serves.
int64_t merged_row_stride(const Tensor& t, int64_t last) {
  int64_t stride = -1, next = 0;  // the innermost non-1 dim's stride; what the next one out must have
  for (int64_t d = last; d >= 0; --d) {
    if (t.size(d) == 1) continue;
    if (stride >= 0 && t.stride(d) != next) return -1;
    if (stride < 0) stride = t.stride(d);
    next = t.stride(d) * t.size(d);
  }
  return stride < 0 ? t.stride(last) : stride;
}

// Note [Folding the batch into rows]
// A batch of products against one b (b without batch dims: matmul with a 2-D
// or 1-D b, linear over [batch, seq, features]) is one GEMM with batch * m
// rows when a's batch and row dims merge into one stride, as PyTorch folds
// it: one large product runs at the kernels' full rate where `batch` small
// ones (m = 1 for a batch of vectors) each pay packing and thread start-up.
// The caller's shape (`result`) is unchanged; explain shows the folded
// problem (batch 1, m = batch * m).
bool fold_batch_into_rows(Params& p) {
  const int64_t batch_dims = static_cast<int64_t>(p.batch_shape.size());
  if (batch_dims == 0 || p.batch == 1) return false;
  const int64_t row_stride = merged_row_stride(p.a, batch_dims);
  if (row_stride < 0) return false;
  p.m *= p.batch;
  p.a = Tensor::from_storage(p.a.storage(), {p.m, p.k}, {row_stride, p.a.stride(-1)}, p.a.storage_offset(), p.dtype);
  p.b = Tensor::from_storage(p.b.storage(), {p.k, p.n}, {p.b.stride(-2), p.b.stride(-1)}, p.b.storage_offset(),
                             p.dtype);
  p.batch = 1;
  p.batch_shape.clear();
  return true;
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
  p.batch_shape = broadcast_shapes(op, {{"a batch", Shape(a.shape().begin(), a.shape().end() - 2)},
                                        {"b batch", Shape(b.shape().begin(), b.shape().end() - 2)}},
                                    "batch shapes");
  p.batch = 1;
  for (int64_t d : p.batch_shape) p.batch *= d;
  Shape a_shape = p.batch_shape, b_shape = p.batch_shape, out_shape = p.batch_shape;
  a_shape.insert(a_shape.end(), {p.m, p.k});
  b_shape.insert(b_shape.end(), {p.k, p.n});
  out_shape.insert(out_shape.end(), {p.m, p.n});
  p.a = a.expand(a_shape);
  p.b = b.expand(b_shape);
  result = p.batch_shape;
  if (a_in.ndim() > 1) result.push_back(p.m);
  if (b_in.ndim() > 1) result.push_back(p.n);
  if (b.ndim() == 2 && fold_batch_into_rows(p))  // Note [Folding the batch into rows]
    out_shape = {p.m, p.n};
  p.out = Tensor::empty(out_shape, p.dtype, p.device);
  return p;
}

void attach_bias(const char* op, Params& p, const Tensor& bias, double beta, double alpha) {
  // PyTorch's rule for integer products: the scalars must be integers too.
  for (const auto& [name, x] : {std::pair{"alpha", alpha}, std::pair{"beta", beta}})
    if (is_integral(p.dtype) && x != std::floor(x))
      throw_bad_value(op, std::string(name) + " " + ops::value_text(x) + " for " + dtype_name(p.dtype) + " tensors",
                      std::string("an integral ") + name + " for integer tensors");
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
  p.bias = bias.expand(out);
}

// The call of a prepared problem. An empty float sum (k == 0) runs no
// implementation: out is beta * bias, or zeros. (ref:any, the only
// implementation of integer products, handles their empty sums itself.)
ops::Call to_call(Params params, Shape result) {
  auto p = std::make_shared<Params>(std::move(params));
  ops::Call c;
  c.op = &ops::matmul::matmul_op();
  c.problem = ops::matmul::problem_of(*p);
  c.params = p;
  c.compute = p->out.numel() > 0 && (p->k > 0 || is_integral(p->dtype));
  c.result = [p, result = std::move(result)]() -> ops::ArgValue {
    if (p->k == 0 && p->out.numel() > 0 && !is_integral(p->dtype))
      ops::matmul::for_each_gemm(*p, [&](const ops::matmul::Gemm2D& g) {
        if (g.beta != 0) return;
        // c holds the accumulator type (Note [Matmul params]): fp32 for f16 and bf16.
        const std::size_t item = p->dtype == DType::f16 || p->dtype == DType::bf16 ? sizeof(float)
                                                                                   : dtype_itemsize(p->dtype);
        const std::size_t bytes = item * static_cast<std::size_t>(p->m * p->n);
        std::memset(g.c, 0, bytes);
      });
    return p->out.reshape(result);
  };
  return c;
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

}  // namespace

namespace ops::matmul {

Call prepare_matmul(const Tensor& a, const Tensor& b) {
  Shape result;
  Params p = make_params("matmul", a, b, result);
  return to_call(std::move(p), std::move(result));
}

Call prepare_addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha) {
  Shape result;
  Params p = addmm_params(bias, a, b, beta, alpha, result);
  return to_call(std::move(p), std::move(result));
}

Call prepare_linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  Shape result;
  Params p = linear_params(x, weight, bias, result);
  return to_call(std::move(p), std::move(result));
}

}  // namespace ops::matmul

namespace {
Tensor tensor_of(const ops::ArgValue& v) { return std::get<Tensor>(v); }
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) { return tensor_of(ops::run(ops::matmul::prepare_matmul(a, b))); }

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha) {
  return tensor_of(ops::run(ops::matmul::prepare_addmm(bias, a, b, beta, alpha)));
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return tensor_of(ops::run(ops::matmul::prepare_linear(x, weight, bias)));
}

dispatch::Decision explain_matmul(const Tensor& a, const Tensor& b) {
  return ops::explain(ops::matmul::prepare_matmul(a, b));
}

dispatch::Decision explain_addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha) {
  return ops::explain(ops::matmul::prepare_addmm(bias, a, b, beta, alpha));
}

dispatch::Decision explain_linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return ops::explain(ops::matmul::prepare_linear(x, weight, bias));
}

}  // namespace bp
