// The sdpa front end: validates a call as PyTorch's
// scaled_dot_product_attention does (spec §4.10.8 "input validation"),
// reduces it to the extended-batch form (Note [SDPA params]) and hands it to
// dispatch (op.cpp declares the op and its entry).

#include "backplane/ops/sdpa.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backplane/flags.h"
#include "core/tensor_internal.h"
#include "ops/sdpa/checks.h"
#include "ops/sdpa/impls.h"
#include "ops/sdpa/params.h"
#include "ops/sdpa/priority.h"

namespace bp {
namespace {

using ops::sdpa::MaskKind;
using ops::sdpa::Params;
constexpr const char* kOp = "scaled_dot_product_attention";

Shape lead(const Tensor& t, int64_t drop = 2) { return Shape(t.shape().begin(), t.shape().end() - drop); }

// A view with dim d (size a*b) split into (a, b): h = i*b + j, as
// repeat_interleave numbers query heads. With b_stride0 the new inner dim
// gets stride 0 and size b while d keeps size a (the k/v side of GQA).
Tensor split_dim(const Tensor& t, int64_t d, int64_t a, int64_t b, bool inner_broadcast) {
  Shape shape = t.shape(), strides = t.strides();
  const auto at = shape.begin() + d;
  const int64_t s = strides[static_cast<std::size_t>(d)];
  shape[static_cast<std::size_t>(d)] = a;
  shape.insert(at + 1, b);
  strides[static_cast<std::size_t>(d)] = inner_broadcast ? s : s * b;
  strides.insert(strides.begin() + d + 1, inner_broadcast ? 0 : s);
  return Tensor::from_storage(t.storage(), shape, strides, t.storage_offset(), t.dtype());
}

void check_input(const char* name, const Tensor& t) {
  if (!t.defined()) throw_bad_value(kOp, std::string(name) + " undefined", std::string("a defined ") + name + " tensor");
  if (!is_floating(t.dtype()))
    throw_bad_value(kOp, std::string(name) + " of dtype " + dtype_name(t.dtype()),
                    "float16, bfloat16, float32 or float64 query, key and value");
  if (t.ndim() < 2)
    throw_bad_value(kOp, std::string(name) + " " + detail::shape_str(t.shape()),
                    std::string("a ") + name + " with at least 2 dimensions (…, seq_len, head_dim)");
}

// The caller's bool or float mask as an additive mask of the compute dtype,
// at the mask's own size (Note [SDPA params]).
Tensor additive_mask(const Tensor& m, DType cd) {
  if (m.dtype() != DType::boolean) return m.to(cd);
  // A device mask is converted on the host, once per call, and sent back.
  if (!m.device().is_cpu()) return additive_mask(m.to(Device::cpu()), cd).to(m.device());
  const Tensor src = m.contiguous();
  Tensor out = Tensor::empty(m.shape(), cd);
  const bool* keep = src.data_ptr<bool>();
  const int64_t n = m.numel();
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    if (cd == DType::f64)
      out.data_ptr<double>()[i] = keep[i] ? 0.0 : -inf;
    else
      out.data_ptr<float>()[i] = keep[i] ? 0.0f : -std::numeric_limits<float>::infinity();
  }
  return out;
}

Params make_params(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p,
                   bool is_causal, std::optional<double> scale, bool enable_gqa, Shape& result) {
  check_input("query", q);
  check_input("key", k);
  check_input("value", v);
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype())
    throw_bad_value(kOp,
                    std::string("query.dtype ") + dtype_name(q.dtype()) + ", key.dtype " + dtype_name(k.dtype()) +
                        ", value.dtype " + dtype_name(v.dtype()),
                    "query, key and value of the same dtype");
  if (q.device() != k.device() || q.device() != v.device())
    throw_bad_value(kOp, "query on " + q.device().str() + ", key on " + k.device().str() + ", value on " + v.device().str(),
                    "query, key and value on one device");
  if (k.size(-1) != q.size(-1))
    throw_bad_value(kOp, "query " + detail::shape_str(q.shape()) + " and key " + detail::shape_str(k.shape()),
                    "key's last dimension (head_dim) equal to query's");
  if (k.size(-2) != v.size(-2))
    throw_bad_value(kOp, "key " + detail::shape_str(k.shape()) + " and value " + detail::shape_str(v.shape()),
                    "key and value with the same sequence length (size(-2))");
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0))
    throw_bad_value(kOp, "dropout_p " + ops::sdpa::checks::num_text(dropout_p), "a dropout probability in [0, 1]");
  if (scale && !std::isfinite(*scale)) throw_bad_value(kOp, "scale " + ops::sdpa::checks::num_text(*scale), "a finite scale");
  if (mask.defined()) {
    if (mask.dtype() != DType::boolean && !is_floating(mask.dtype()))
      throw_bad_value(kOp, std::string("attn_mask of dtype ") + dtype_name(mask.dtype()),
                      "a bool attn_mask (True = take part) or a float one (added to the scores)");
    if (mask.device() != q.device())
      throw_bad_value(kOp, "attn_mask on " + mask.device().str() + ", query on " + q.device().str(),
                      "attn_mask on the query's device");
    if (is_causal)
      throw_bad_value(kOp, "attn_mask together with is_causal=True",
                      "either attn_mask or is_causal (an explicit mask must not be set when is_causal=True)");
  }

  Params p;
  p.q_in = q, p.k_in = k, p.v_in = v, p.mask_in = mask;
  p.dtype = q.dtype();
  p.device = q.device();
  p.L = q.size(-2), p.S = k.size(-2), p.E = q.size(-1), p.Ev = v.size(-1);
  p.dropout_p = dropout_p;
  p.is_causal = is_causal;
  p.enable_gqa = enable_gqa;
  p.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(p.E));

  Tensor qv = q, kv = k, vv = v;
  int64_t group = 1, kv_heads = 0;
  if (enable_gqa && q.ndim() >= 3 && k.ndim() >= 3 && v.ndim() >= 3 &&
      (k.size(-3) != q.size(-3) || v.size(-3) != q.size(-3))) {
    const int64_t hq = q.size(-3), hk = k.size(-3), hv = v.size(-3);
    if (hk != hv || hk == 0 || hq % hk != 0)
      throw_bad_value(kOp,
                      "query heads " + std::to_string(hq) + ", key heads " + std::to_string(hk) + ", value heads " +
                          std::to_string(hv),
                      "with enable_gqa, key and value with one head count that divides the query's (size(-3))");
    group = hq / hk, kv_heads = hk;
    qv = split_dim(q, q.ndim() - 3, hk, group, false);
    kv = split_dim(k, k.ndim() - 3, hk, group, true);
    vv = split_dim(v, v.ndim() - 3, hk, group, true);
  }
  p.ext_shape = broadcast_shapes(kOp, {{"query", lead(qv)}, {"key", lead(kv)}, {"value", lead(vv)}}, "batch shapes");
  Shape visible = p.ext_shape;  // the caller's batch dims: the (kv heads, group) pair merged back
  if (group > 1) {
    const std::size_t h = visible.size() - 2;
    visible[h] = kv_heads * group;
    visible.erase(visible.begin() + static_cast<std::ptrdiff_t>(h) + 1);
  }
  p.batch = 1;
  for (int64_t d : p.ext_shape) p.batch *= d;
  auto with = [](Shape s, int64_t a, int64_t b) {
    s.insert(s.end(), {a, b});
    return s;
  };
  p.q = qv.expand(with(p.ext_shape, p.L, p.E));
  p.k = kv.expand(with(p.ext_shape, p.S, p.E));
  p.v = vv.expand(with(p.ext_shape, p.S, p.Ev));
  p.out = Tensor::empty(with(p.ext_shape, p.L, p.Ev), p.dtype, p.device);
  if (mask.defined()) {
    p.mask_kind = mask.dtype() == DType::boolean ? MaskKind::boolean : MaskKind::additive;
    const Shape scores = with(visible, p.L, p.S);
    if (mask.ndim() > static_cast<int64_t>(scores.size()) ||
        broadcast_shapes(kOp, {{"attn_mask", mask.shape()}, {"scores", scores}}, "attn_mask and the scores (…, L, S)") !=
            scores)
      throw_bad_value(kOp, "attn_mask " + detail::shape_str(mask.shape()) + " for scores " + detail::shape_str(scores),
                      "an attn_mask broadcastable to the scores' shape (…, L, S)");
    Tensor m = additive_mask(mask, ops::sdpa::compute_dtype(p.dtype)).expand(scores);
    if (group > 1) m = split_dim(m, m.ndim() - 3, kv_heads, group, false);
    p.mask = m;
  }
  result = with(visible, p.L, p.Ev);
  return p;
}

}  // namespace

namespace ops::sdpa {

Call prepare_sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask, double dropout_p,
                  bool is_causal, std::optional<double> scale, bool enable_gqa) {
  Shape result;
  auto p = std::make_shared<Params>(make_params(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa, result));
  // PyTorch's "no viable backend" rule (spec §4.10.8): on the CPU flash and
  // math both off; on CUDA every one of math, flash, mem-efficient, cuDNN off.
  namespace cu = backends::cuda;
  const bool none_enabled = p->device.is_cpu() ? !cu::flash_sdp_enabled() && !cu::math_sdp_enabled()
                                               : !cu::flash_sdp_enabled() && !cu::math_sdp_enabled() &&
                                                     !cu::mem_efficient_sdp_enabled() && !cu::cudnn_sdp_enabled();
  if (none_enabled)
    throw_runtime(kOp,
                  "No viable backend for scaled_dot_product_attention was found. This is likely due to turning off "
                  "both the math kernel and the fused kernels.");
  prefer_cudnn_once(*p);
  Call c;
  c.op = &sdpa_op();
  c.problem = problem_of(*p);
  c.params = p;
  c.compute = p->out.numel() > 0;
  c.result = [p, result = std::move(result)]() -> ArgValue { return p->out.reshape(result); };
  return c;
}

}  // namespace ops::sdpa

Tensor sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask, double dropout_p,
            bool is_causal, std::optional<double> scale, bool enable_gqa) {
  return std::get<Tensor>(
      ops::run(ops::sdpa::prepare_sdpa(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)));
}

dispatch::Decision explain_sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
  return ops::explain(ops::sdpa::prepare_sdpa(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa));
}

}  // namespace bp
