// The mha front end: validates as PyTorch's modules do (errors name the
// argument, the value and what is allowed) and builds Params (Note [MHA params]).
//
// Note [is_causal hint]
// As in PyTorch, is_causal is a hint that attn_mask is causal and needs
// attn_mask ("Need attn_mask if specifying the is_causal hint"). Where
// PyTorch then drops the mask and asks SDPA for its causal form (no key
// padding mask, no weights wanted: F.multi_head_attention_forward), both
// implementations do the same (attend_causal()); otherwise the mask is used.

#include "ops/mha/front.h"

#include <cmath>
#include <limits>
#include <string>

#include "backplane/error.h"
#include "core/tensor_internal.h"

namespace bp::ops::mha {
namespace {

std::string shape_of(const Tensor& t) { return detail::shape_str(t.shape()); }

void expect_shape(const std::string& subject, const Tensor& t, const Shape& want) {
  if (t.defined() && t.shape() != want)
    throw_bad_value(subject, "shape " + shape_of(t), "shape " + detail::shape_str(want));
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.data() == b.data() &&
         a.shape() == b.shape() && a.strides() == b.strides() && a.dtype() == b.dtype();
}

// PyTorch's F._canonical_mask, then shaped to broadcast: bool True (do not
// attend) becomes -inf, a float mask is taken as it is, in `dtype`.
Tensor additive(const std::string& name, const Tensor& m, DType dtype) {
  if (m.dtype() != DType::boolean && !is_floating(m.dtype()))
    throw_bad_value("mha: " + name, std::string("dtype ") + dtype_name(m.dtype()),
                    "only bool and floating types of " + name + " are supported");
  if (m.dtype() != DType::boolean) return m.to(dtype).contiguous();
  Tensor b = m.contiguous();
  Tensor out = dtype == DType::f64 ? Tensor::empty(m.shape(), dtype) : Tensor();
  const bool* src = b.data_ptr<bool>();
  const int64_t n = m.numel();
  if (dtype == DType::f64) {
    double* d = out.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) d[i] = src[i] ? -std::numeric_limits<double>::infinity() : 0.0;
    return out;
  }
  Tensor f = Tensor::empty(m.shape(), DType::f32);
  float* d = f.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) d[i] = src[i] ? -std::numeric_limits<float>::infinity() : 0.0f;
  return f.to(dtype);
}

// attn_mask: (L, S) or (N*H, L, S) batched / (H, L, S) unbatched -> [1|N, 1|H, L, S].
Tensor attn_mask_of(const std::string& name, const Tensor& m, const Params& p, bool batched) {
  if (!m.defined()) return m;
  Tensor a = additive(name, m, p.dtype);
  if (m.ndim() == 2) {
    if (m.size(0) != p.L || m.size(1) != p.S)
      throw_bad_value("mha", "the shape of the 2D " + name + " is " + shape_of(m),
                      "(" + std::to_string(p.L) + ", " + std::to_string(p.S) + ")");
    return a.reshape({1, 1, p.L, p.S});
  }
  if (m.ndim() == 3) {
    const int64_t lead = batched ? p.N * p.H : p.H;
    if (m.size(0) != lead || m.size(1) != p.L || m.size(2) != p.S)
      throw_bad_value("mha", "the shape of the 3D " + name + " is " + shape_of(m),
                      "(" + std::to_string(lead) + ", " + std::to_string(p.L) + ", " + std::to_string(p.S) + ")");
    return a.reshape({p.N, p.H, p.L, p.S});
  }
  throw_bad_value("mha: " + name, std::to_string(m.ndim()) + " dims", "2 or 3 dims (" + name + "'s dimension)");
}

// key_padding_mask: (N, S) batched, (S,) unbatched -> [N, 1, 1, S].
Tensor kpm_of(const std::string& name, const Tensor& m, const Params& p, bool batched) {
  if (!m.defined()) return m;
  const Shape want = batched ? Shape{p.N, p.S} : Shape{p.S};
  if (m.shape() != want)
    throw_bad_value("mha: " + name, "shape " + shape_of(m), "expecting " + name + " shape of " + detail::shape_str(want));
  return additive(name, m, p.dtype).reshape({p.N, 1, 1, p.S});
}

// [L, N, E] (or batch-first [N, L, E], or unbatched [L, E]) -> contiguous [N, L, E].
Tensor batch_first_of(const Tensor& t, bool batched, bool batch_first) {
  if (!batched) return t.contiguous().reshape({1, t.size(0), t.size(1)});
  return (batch_first ? t : t.transpose(0, 1)).contiguous();
}

void check_input(const std::string& name, const Tensor& t, DType dtype) {
  if (!t.defined()) throw_bad_value("mha: " + name, "None", "a Tensor");
  if (!is_floating(t.dtype()))
    throw_bad_value("mha: " + name, std::string("dtype ") + dtype_name(t.dtype()), "a floating dtype");
  if (t.dtype() != dtype)
    throw_bad_value("mha: " + name, std::string("dtype ") + dtype_name(t.dtype()),
                    std::string("the query's dtype, ") + dtype_name(dtype));
}

// The heads and the dropout of either kind of call, checked, once p.E is known.
void set_heads_and_dropout(Params& p, int64_t H, double dropout) {
  if (H <= 0) throw_bad_value("mha: num_heads", std::to_string(H), "a positive int");
  if (p.E % H != 0)
    throw_bad_value("mha", "embed_dim " + std::to_string(p.E) + " and num_heads " + std::to_string(H),
                    "embed_dim must be divisible by num_heads");
  if (dropout < 0 || dropout > 1 || std::isnan(dropout))
    throw_bad_value("mha: dropout", std::to_string(dropout), "a probability in [0, 1]");
  p.H = H;
  p.D = p.E / H;
  p.dropout = dropout;
}

void check_causal(bool is_causal, const Tensor& attn_mask) {
  if (is_causal && !attn_mask.defined())
    throw_bad_value("mha: is_causal", "True with attn_mask None",
                    "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                    "`generate_square_subsequent_mask` to create this mask.");
}

// The caller's output (and weights) shapes; `out` in the caller's layout.
void allocate_outputs(Params& p, const Tensor& query, bool batched) {
  p.out = Tensor::empty(query.shape(), p.dtype);
  if (!p.need_weights) return;
  const int64_t Sx = p.S + (p.bias_k.defined() ? 1 : 0) + (p.add_zero_attn ? 1 : 0);
  Shape w = p.average_attn_weights ? Shape{p.L, Sx} : Shape{p.H, p.L, Sx};
  if (batched) w.insert(w.begin(), p.N);
  p.weights = Tensor::empty(w, p.dtype);
}

Call to_call(std::shared_ptr<Params> p) {
  Call c;
  c.op = &mha_op();
  c.problem = problem_of(*p);
  c.params = p;
  c.compute = p->out.numel() > 0;
  c.result = [p]() -> ArgValue {
    std::vector<Tensor> r = {p->out};
    if (p->weights.defined()) r.push_back(p->weights);
    return r;
  };
  return c;
}

}  // namespace

dispatch::Op& mha_op() {
  static dispatch::Op& op = dispatch_op("mha");
  return op;
}

dispatch::Problem problem_of(const Params& p) {
  uint32_t layout = (p.kind == Kind::encoder_layer ? kEncoderLayer : 0u) | (p.attn_mask.defined() ? kAttnMask : 0u) |
                    (p.kpm.defined() ? kPaddingMask : 0u) | (p.need_weights ? kNeedWeights : 0u) |
                    (p.nested ? kNested : 0u) | (p.norm_first ? kNormFirst : 0u);
  return mha_op().problem(p.device, p.dtype, layout, {p.N, p.L, p.S, p.E, p.H, p.F});
}

Call prepare_attention(const AttentionArgs& a) {
  auto p = std::make_shared<Params>();
  p->kind = Kind::attention;
  if (!a.query.defined()) throw_bad_value("mha: query", "None", "a Tensor");
  const int64_t dim = a.query.ndim();
  if (dim != 2 && dim != 3) throw_bad_value("mha: query", std::to_string(dim) + " dims", "2 (unbatched) or 3 dims");
  const bool batched = dim == 3;
  p->dtype = a.query.dtype();
  for (auto [name, t] : {std::pair{"key", &a.key}, {"value", &a.value}}) {
    check_input(name, *t, p->dtype);
    if (t->ndim() != dim)
      throw_bad_value("mha", std::string("query of ") + std::to_string(dim) + " dims and " + name + " of " +
                                 std::to_string(t->ndim()),
                      "query, key and value all batched (3-D) or all unbatched (2-D)");
  }
  check_input("query", a.query, p->dtype);
  p->query_dim = dim;
  p->batch_first = a.batch_first;
  p->training = a.training;
  p->self_attention = same_tensor(a.query, a.key) && same_tensor(a.key, a.value);
  p->x = batch_first_of(a.query, batched, a.batch_first);
  p->key = batch_first_of(a.key, batched, a.batch_first);
  p->value = batch_first_of(a.value, batched, a.batch_first);
  p->N = p->x.size(0), p->L = p->x.size(1), p->E = p->x.size(2), p->S = p->key.size(1);
  p->kdim = p->key.size(2), p->vdim = p->value.size(2);
  if (p->key.size(0) != p->N || p->value.size(0) != p->N || p->value.size(1) != p->S)
    throw_bad_value("mha", "query " + shape_of(a.query) + ", key " + shape_of(a.key) + ", value " + shape_of(a.value),
                    "key and value of one batch and sequence length, the query's batch");
  set_heads_and_dropout(*p, a.num_heads, a.dropout);
  const int64_t E = p->E;
  p->in_w = a.in_proj_weight, p->in_b = a.in_proj_bias;
  if (p->in_w.defined()) {
    if (a.q_proj_weight.defined() || a.k_proj_weight.defined() || a.v_proj_weight.defined())
      throw_bad_value("mha", "in_proj_weight and q/k/v_proj_weight", "one of them (in_proj_weight when kdim = vdim = embed_dim)");
    expect_shape("mha: in_proj_weight", p->in_w, {3 * E, E});
    if (p->kdim != E || p->vdim != E)
      throw_bad_value("mha", "key dim " + std::to_string(p->kdim) + " and value dim " + std::to_string(p->vdim),
                      "both equal to embed_dim " + std::to_string(E) + " with in_proj_weight (else q/k/v_proj_weight)");
    p->in_w_dtype = p->in_w.dtype();
  } else {
    if (!a.q_proj_weight.defined() || !a.k_proj_weight.defined() || !a.v_proj_weight.defined())
      throw_bad_value("mha", "in_proj_weight None and q/k/v_proj_weight not all given",
                      "in_proj_weight, or q_proj_weight, k_proj_weight and v_proj_weight");
    p->q_w = a.q_proj_weight, p->k_w = a.k_proj_weight, p->v_w = a.v_proj_weight;
    expect_shape("mha: q_proj_weight", p->q_w, {E, E});
    expect_shape("mha: k_proj_weight", p->k_w, {E, p->kdim});
    expect_shape("mha: v_proj_weight", p->v_w, {E, p->vdim});
  }
  if (p->in_b.defined()) {
    expect_shape("mha: in_proj_bias", p->in_b, {3 * E});
    p->in_b_dtype = p->in_b.dtype();
  }
  p->out_w = a.out_proj_weight, p->out_b = a.out_proj_bias;
  if (!p->out_w.defined()) throw_bad_value("mha: out_proj_weight", "None", "a Tensor");
  expect_shape("mha: out_proj_weight", p->out_w, {E, E});
  expect_shape("mha: out_proj_bias", p->out_b, {E});
  if (a.bias_k.defined() != a.bias_v.defined())
    throw_bad_value("mha", "only one of bias_k and bias_v", "both or neither");
  p->bias_k = a.bias_k, p->bias_v = a.bias_v;
  expect_shape("mha: bias_k", p->bias_k, {1, 1, E});
  expect_shape("mha: bias_v", p->bias_v, {1, 1, E});
  p->add_zero_attn = a.add_zero_attn;
  p->need_weights = a.need_weights, p->average_attn_weights = a.average_attn_weights;
  check_causal(a.is_causal, a.attn_mask);
  p->is_causal = a.is_causal;
  p->float_masks = (a.attn_mask.defined() && is_floating(a.attn_mask.dtype())) ||
                   (a.key_padding_mask.defined() && is_floating(a.key_padding_mask.dtype()));
  p->attn_mask = attn_mask_of("attn_mask", a.attn_mask, *p, batched);
  p->kpm = kpm_of("key_padding_mask", a.key_padding_mask, *p, batched);
  p->kpm_in = a.key_padding_mask;
  p->device = a.query.device();
  allocate_outputs(*p, a.query, batched);
  return to_call(p);
}

Call prepare_encoder_layer(const LayerArgs& a) {
  auto p = std::make_shared<Params>();
  p->kind = Kind::encoder_layer;
  if (!a.src.defined()) throw_bad_value("transformer_encoder_layer: src", "None", "a Tensor");
  const int64_t dim = a.src.ndim();
  if (dim != 2 && dim != 3)
    throw_bad_value("transformer_encoder_layer: src", std::to_string(dim) + " dims", "2 (unbatched) or 3 dims");
  const bool batched = dim == 3;
  p->dtype = a.src.dtype();
  check_input("src", a.src, p->dtype);
  p->query_dim = dim;
  p->batch_first = a.batch_first;
  p->training = a.training;
  p->x = batch_first_of(a.src, batched, a.batch_first);
  p->N = p->x.size(0), p->L = p->S = p->x.size(1), p->E = p->kdim = p->vdim = p->x.size(2);
  set_heads_and_dropout(*p, a.num_heads, a.dropout);
  const int64_t E = p->E;
  auto need = [&](const char* name, const Tensor& t, const Shape& shape) {
    if (!t.defined()) throw_bad_value(std::string("transformer_encoder_layer: ") + name, "None", "a Tensor");
    check_input(name, t, p->dtype);
    expect_shape(std::string("transformer_encoder_layer: ") + name, t, shape);
  };
  auto maybe = [&](const char* name, const Tensor& t, const Shape& shape) {
    if (t.defined()) need(name, t, shape);
  };
  need("in_proj_weight", a.in_proj_weight, {3 * E, E});
  need("out_proj_weight", a.out_proj_weight, {E, E});
  if (!a.linear1_weight.defined()) throw_bad_value("transformer_encoder_layer: linear1_weight", "None", "a Tensor");
  p->F = a.linear1_weight.size(0);
  need("linear1_weight", a.linear1_weight, {p->F, E});
  need("linear2_weight", a.linear2_weight, {E, p->F});
  maybe("in_proj_bias", a.in_proj_bias, {3 * E});
  maybe("out_proj_bias", a.out_proj_bias, {E});
  maybe("linear1_bias", a.linear1_bias, {p->F});
  maybe("linear2_bias", a.linear2_bias, {E});
  maybe("norm1_weight", a.norm1_weight, {E});
  maybe("norm1_bias", a.norm1_bias, {E});
  maybe("norm2_weight", a.norm2_weight, {E});
  maybe("norm2_bias", a.norm2_bias, {E});
  p->in_w = a.in_proj_weight, p->in_b = a.in_proj_bias, p->out_w = a.out_proj_weight, p->out_b = a.out_proj_bias;
  p->in_w_dtype = p->in_w.dtype();
  if (p->in_b.defined()) p->in_b_dtype = p->in_b.dtype();
  p->n1_w = a.norm1_weight, p->n1_b = a.norm1_bias, p->n2_w = a.norm2_weight, p->n2_b = a.norm2_bias;
  p->l1_w = a.linear1_weight, p->l1_b = a.linear1_bias, p->l2_w = a.linear2_weight, p->l2_b = a.linear2_bias;
  for (double eps : {a.norm1_eps, a.norm2_eps})
    if (!(eps > 0)) throw_bad_value("transformer_encoder_layer: layer_norm_eps", std::to_string(eps), "a positive float");
  p->eps1 = a.norm1_eps, p->eps2 = a.norm2_eps;
  p->activation = a.activation;
  p->norm_first = a.norm_first;
  check_causal(a.is_causal, a.src_mask);
  p->is_causal = a.is_causal;
  p->attn_mask = attn_mask_of("src_mask", a.src_mask, *p, batched);
  p->kpm = kpm_of("src_key_padding_mask", a.src_key_padding_mask, *p, batched);
  p->kpm_in = a.src_key_padding_mask;
  p->nested = a.nested;
  if (a.nested && (!a.src_key_padding_mask.defined() || a.src_mask.defined()))
    throw_bad_value("transformer_encoder_layer: nested", "True with " +
                        std::string(a.src_key_padding_mask.defined() ? "a src_mask" : "no src_key_padding_mask"),
                    "a src_key_padding_mask and no src_mask (the padding to skip)");
  p->device = a.src.device();
  allocate_outputs(*p, a.src, batched);
  return to_call(p);
}

}  // namespace bp::ops::mha
