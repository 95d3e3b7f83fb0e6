// The sparse front end and the public C++ API (backplane/ops/sparse.h):
// linear(input, W) and mm(W, B) with a 2:4 weight, validated and reduced to
// one problem (Note [Sparse params]); op.cpp declares the op.

#include "backplane/ops/sparse.h"

#include "core/tensor_internal.h"
#include "ops/sparse/front.h"
#include "ops/sparse/layout.h"
#include "ops/sparse/params.h"

namespace bp {
namespace ops::sparse {
namespace {

void check_operand(const char* op, const char* name, const Tensor& t, const Tensor& values) {
  if (!t.defined()) throw_bad_value(op, std::string(name) + " undefined", std::string("a defined ") + name);
  if (t.dtype() != values.dtype())
    throw_bad_value(op, std::string(name) + " " + dtype_name(t.dtype()) + " and a weight of " + dtype_name(values.dtype()),
                    "tensors of one dtype (convert with .to(dtype))");
  if (t.device() != values.device())
    throw_bad_value(op, std::string(name) + " on " + t.device().str() + " and the weight on " + values.device().str(),
                    "tensors on one device");
}

void check_dtype(const char* op, const Tensor& values) {
  const DType d = values.dtype();
  const bool ok = cpu_dtype(d) || (d == DType::i8 && values.device().is_cuda());
  if (!ok)
    throw_bad_value(op, std::string("a weight of dtype ") + dtype_name(d),
                    "float32, bfloat16, float16 or float64 (int8 on CUDA only)");
}

// The problem's weight side, shared by linear and mm: the compressed weight
// checked against k inputs, `operand` (the activations) checked against it.
Params weight_params(const char* op, const Tensor& values, const Tensor& meta, const char* operand_name,
                     const Tensor& operand, int64_t k) {
  Params p;
  p.n = check_compressed(op, values, meta, k);
  check_dtype(op, values);
  check_operand(op, operand_name, operand, values);
  p.dtype = values.dtype();
  p.device = values.device();
  p.k = k;
  p.values = values;
  p.meta = meta;
  return p;
}

Call to_call(Params params, Shape result) {
  auto p = std::make_shared<Params>(std::move(params));
  Call c;
  c.op = &sparse_op();
  c.problem = problem_of(*p);
  c.params = p;
  c.compute = p->out.numel() > 0;
  c.result = [p, result = std::move(result)]() -> ArgValue { return p->out.reshape(result); };
  if (p->k == 0 && p->out.numel() > 0) {
    // An empty sum: out is the bias, or zeros, without an implementation.
    c.compute = false;
    c.result = [p, result = std::move(c.result)]() -> ArgValue {
      Tensor view = Tensor::from_storage(p->out.storage(), {p->m, p->n}, {p->out_rs, p->out_cs},
                                         p->out.storage_offset(), p->dtype);
      view.copy_from(p->bias.defined() ? p->bias.expand({p->m, p->n}) : Tensor::zeros({p->m, p->n}, p->dtype));
      return result();
    };
  }
  return c;
}

}  // namespace

Call prepare_linear(const Tensor& input, const Tensor& values, const Tensor& meta, const Tensor& bias) {
  const char* op = "sparse linear";
  if (!input.defined() || input.ndim() == 0)
    throw_bad_value(op, input.defined() ? "a 0-d input" : "an undefined input", "an input [..., in_features]");
  const int64_t k = input.size(-1);
  Params p = weight_params(op, values, meta, "input", input, k);
  const int64_t n = p.n;
  p.m = input.numel() / std::max<int64_t>(k, 1);
  if (k == 0) {
    p.m = 1;
    for (int64_t i = 0; i + 1 < input.ndim(); ++i) p.m *= input.size(i);
  }
  p.x = input.reshape({p.m, k});
  if (bias.defined()) {
    check_operand(op, "bias", bias, values);
    if (bias.ndim() != 1 || bias.size(0) != n)
      throw_bad_value(op, "bias " + detail::shape_str(bias.shape()), "a 1-D bias of " + std::to_string(n) + " elements");
    p.bias = bias;
  }
  Shape result(input.shape().begin(), input.shape().end() - 1);
  result.push_back(n);
  p.out = Tensor::empty({p.m, n}, p.dtype, p.device);
  p.out_rs = n;
  p.out_cs = 1;
  return to_call(std::move(p), std::move(result));
}

Call prepare_mm(const Tensor& values, const Tensor& meta, const Tensor& b) {
  const char* op = "sparse mm";
  if (!b.defined() || b.ndim() != 2)
    throw_bad_value(op, b.defined() ? "b of shape " + detail::shape_str(b.shape()) : "b undefined",
                    "a 2-D b [in_features, m]");
  Params p = weight_params(op, values, meta, "b", b, b.size(0));
  const int64_t n = p.n;
  p.m = b.size(1);
  p.x = b.T();
  p.out = Tensor::empty({n, p.m}, p.dtype, p.device);
  p.out_rs = 1;
  p.out_cs = p.m;
  return to_call(std::move(p), Shape{n, p.m});
}

}  // namespace ops::sparse

namespace sparse {
namespace {
Tensor tensor_of(const ops::ArgValue& v) { return std::get<Tensor>(v); }
}  // namespace

Tensor SemiStructured::to_dense() const { return ops::sparse::decompress(values, meta, cols, "to_dense"); }

Tensor prune_semi_structured(const Tensor& w) { return ops::sparse::prune(w, "prune_semi_structured"); }

SemiStructured to_sparse_semi_structured(const Tensor& w, bool prune) {
  const char* who = "to_sparse_semi_structured";
  auto c = ops::sparse::compress(prune ? ops::sparse::prune(w, who) : w, who);
  return SemiStructured{c.values, c.meta, w.size(0), w.size(1)};
}

Tensor linear(const Tensor& x, const SemiStructured& w, const Tensor& bias) {
  if (x.defined() && x.ndim() > 0 && x.size(-1) != w.cols)
    throw_bad_value("sparse linear", "input " + detail::shape_str(x.shape()) + " and a weight [" +
                                         std::to_string(w.rows) + ", " + std::to_string(w.cols) + "]",
                    "input's last dimension equal to the weight's in_features");
  return tensor_of(ops::run(ops::sparse::prepare_linear(x, w.values, w.meta, bias)));
}

Tensor mm(const SemiStructured& w, const Tensor& b) {
  if (b.defined() && b.ndim() == 2 && b.size(0) != w.cols)
    throw_bad_value("sparse mm", "b " + detail::shape_str(b.shape()) + " and a weight [" + std::to_string(w.rows) +
                                     ", " + std::to_string(w.cols) + "]",
                    "b's first dimension equal to the weight's in_features");
  return tensor_of(ops::run(ops::sparse::prepare_mm(w.values, w.meta, b)));
}

dispatch::Decision explain_linear(const Tensor& x, const SemiStructured& w, const Tensor& bias) {
  return ops::explain(ops::sparse::prepare_linear(x, w.values, w.meta, bias));
}

}  // namespace sparse
}  // namespace bp
