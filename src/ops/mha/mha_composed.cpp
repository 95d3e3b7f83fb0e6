// composed:any: PyTorch's slow path, one op at a time, as
// F.multi_head_attention_forward and TransformerEncoderLayer._sa_block /
// _ff_block compose it: projections through the matmul dispatcher
// (bp::linear), attention through the sdpa dispatcher (or the matmul one
// when the weights are wanted), then separate passes for the activation,
// the residual adds and the layer norms. It accepts every valid f32/f64
// problem whose activation C++ can run, so it stays last in the list.

#include "backplane/ops/matmul.h"
#include "ops/mha/attention.h"
#include "ops/mha/blocks.h"
#include "ops/mha/checks.h"
#include "ops/mha/impls.h"

namespace bp::ops::mha {
namespace {

// F.linear on [N, L, C] as one [N*L, C] GEMM, as PyTorch's linear folds the
// leading dims (the matmul dispatcher would take [N, L, C] as N batched GEMMs).
Tensor lin(const Tensor& x, const Tensor& w, const Tensor& b) {
  return bp::linear(x.contiguous().reshape({-1, x.size(-1)}), w, b).reshape({x.size(0), x.size(1), -1});
}

// MultiheadAttention on q_in [N, L, E] and k_in, v_in [N, S, kdim|vdim] -> [N, L, E].
Tensor self_or_cross_attention(const Params& p, const Tensor& q_in, const Tensor& k_in, const Tensor& v_in,
                               bool self) {
  const int64_t E = p.E;
  Tensor q, k, v;
  auto bias = [&](int64_t i) { return p.in_b.defined() ? p.in_b.slice(0, i * E, (i + 1) * E) : Tensor(); };
  if (p.in_w.defined() && self) {  // one packed projection, as PyTorch's _in_projection_packed
    Tensor qkv = lin(q_in, p.in_w, p.in_b);
    q = qkv.slice(2, 0, E), k = qkv.slice(2, E, 2 * E), v = qkv.slice(2, 2 * E, 3 * E);
  } else if (p.in_w.defined()) {
    q = lin(q_in, p.in_w.slice(0, 0, E), bias(0));
    k = lin(k_in, p.in_w.slice(0, E, 2 * E), bias(1));
    v = lin(v_in, p.in_w.slice(0, 2 * E, 3 * E), bias(2));
  } else {
    q = lin(q_in, p.q_w, bias(0));
    k = lin(k_in, p.k_w, bias(1));
    v = lin(v_in, p.v_w, bias(2));
  }
  return lin(attention_core(p, q, k, v), p.out_w, p.out_b);
}

Tensor feed_forward(const Params& p, const Tensor& x) {
  Tensor h = lin(x, p.l1_w, p.l1_b);
  blocks::bias_activation_(h, Tensor(), p.activation);
  return lin(h, p.l2_w, p.l2_b);
}

Tensor plus(Tensor a, const Tensor& b) {
  Tensor out = a.contiguous().clone();
  blocks::add_(out, b.contiguous());
  return out;
}

// Zeros at padded positions (the nested-tensor path's output, spec §7.3).
void zero_padding(const Params& p, Tensor& y) {
  Tensor pad = p.kpm_in.to(DType::boolean).contiguous();
  const bool* m = pad.data_ptr<bool>();
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t i = 0; i < p.L; ++i)
      if (m[n * p.L + i]) {
        Tensor row = y.select(0, n).select(0, i);
        row.copy_from(Tensor::zeros({p.E}, p.dtype));
      }
}

void run_composed(const Params& p) {
  if (p.kind == Kind::attention) {
    write_out(p, self_or_cross_attention(p, p.x, p.key, p.value, p.self_attention));
    return;
  }
  const Tensor& x = p.x;
  auto sa = [&](const Tensor& h) { return self_or_cross_attention(p, h, h, h, true); };
  Tensor y;
  if (p.norm_first) {
    Tensor x1 = plus(x, sa(blocks::layer_norm(x, p.n1_w, p.n1_b, p.eps1)));
    y = plus(x1, feed_forward(p, blocks::layer_norm(x1, p.n2_w, p.n2_b, p.eps2)));
  } else {
    Tensor x1 = blocks::layer_norm(plus(x, sa(x)), p.n1_w, p.n1_b, p.eps1);
    y = blocks::layer_norm(plus(x1, feed_forward(p, x1)), p.n2_w, p.n2_b, p.eps2);
  }
  if (p.nested) zero_padding(p, y);
  write_out(p, y);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_composed() {
  dispatch::Properties props;
  props.workspace = "every intermediate of the layer ([N, L, 3E] projections, [N, L, F] feed-forward)";
  props.calls = {"matmul", "sdpa"};
  return std::make_unique<dispatch::Impl<Params>>("composed:any", "cpu", props, checks::composed_conditions(),
                                                  run_composed);
}

}  // namespace bp::ops::mha
