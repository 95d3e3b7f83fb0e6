// Attention shared by fastpath:cpu and composed:any (attention.h).

#include "ops/mha/attention.h"

#include "ops/mha/blocks.h"

namespace bp::ops::mha {
namespace {

// [N, S, E] with `rows` appended along S (each [1, 1, E] broadcast, or zeros).
Tensor append_row(const Tensor& t, const Tensor& row) {
  const int64_t N = t.size(0), S = t.size(1), E = t.size(2);
  Tensor out = row.defined() ? Tensor::empty({N, S + 1, E}, t.dtype()) : Tensor::zeros({N, S + 1, E}, t.dtype());
  out.slice(1, 0, S).copy_from(t);
  if (row.defined()) out.slice(1, S, S + 1).copy_from(row.expand({N, 1, E}));
  return out;
}

template <class T>
void add_broadcast(Tensor& dst, const Tensor& src, int64_t S) {
  // dst [a, b, L, Sx] contiguous; src [a'|1, b'|1, L'|1, S] contiguous, added to dst[..., :S].
  const int64_t A = dst.size(0), B = dst.size(1), L = dst.size(2), Sx = dst.size(3);
  T* d = dst.data_ptr<T>();
  const T* s = src.data_ptr<T>();
  const int64_t sa = src.size(0) > 1 ? src.stride(0) : 0, sb = src.size(1) > 1 ? src.stride(1) : 0,
                sl = src.size(2) > 1 ? src.stride(2) : 0;
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t l = 0; l < L; ++l) {
        T* drow = d + ((a * B + b) * L + l) * Sx;
        const T* srow = s + a * sa + b * sb + l * sl;
        for (int64_t j = 0; j < S; ++j) drow[j] += srow[j];
      }
}

}  // namespace

bool attend_causal(const Params& p) { return p.is_causal && !p.kpm.defined() && !p.need_weights; }

Tensor merged_mask(const Params& p, int64_t extra) {
  const Tensor am = attend_causal(p) ? Tensor() : p.attn_mask;
  if (!am.defined() && !p.kpm.defined()) return Tensor();
  if (extra == 0 && !p.kpm.defined()) return am;
  if (extra == 0 && !am.defined()) return p.kpm;
  const int64_t A = p.kpm.defined() || (am.defined() && am.size(0) > 1) ? p.N : 1;
  const int64_t B = am.defined() ? am.size(1) : 1;
  Tensor m = Tensor::zeros({A, B, p.L, p.S + extra}, p.dtype);
  for (const Tensor& part : {am, p.kpm}) {
    if (!part.defined()) continue;
    p.dtype == DType::f64 ? add_broadcast<double>(m, part, p.S) : add_broadcast<float>(m, part, p.S);
  }
  return m;
}

Tensor head_view(const Tensor& rows, int64_t N, int64_t len, int64_t H, int64_t D, int64_t col0) {
  const int64_t C = rows.size(-1);
  return Tensor::from_storage(rows.storage(), {N, H, len, D}, {len * C, D, C, 1}, rows.storage_offset() + col0,
                              rows.dtype());
}

Tensor attention_core(const Params& p, const Tensor& q, const Tensor& k_in, const Tensor& v_in) {
  Tensor k = k_in, v = v_in;
  int64_t extra = 0;
  if (p.bias_k.defined()) k = append_row(k, p.bias_k), v = append_row(v, p.bias_v), ++extra;
  if (p.add_zero_attn) k = append_row(k, Tensor()), v = append_row(v, Tensor()), ++extra;
  const int64_t Sx = p.S + extra;
  // [N, len, E] (any row stride, last stride 1) as [N, H, len, D] views.
  auto heads = [&](const Tensor& t, int64_t len) {
    return Tensor::from_storage(t.storage(), {p.N, p.H, len, p.D}, {t.stride(0), p.D, t.stride(1), 1},
                                t.storage_offset(), t.dtype());
  };
  const Tensor mask = merged_mask(p, extra);
  Tensor weights;
  Tensor o = blocks::attend(heads(q, p.L), heads(k, Sx), heads(v, Sx), mask, attend_causal(p),
                            p.need_weights ? &weights : nullptr);
  if (p.need_weights) {
    Tensor w = p.average_attn_weights ? blocks::mean_heads(weights) : weights;
    Tensor dst = p.weights;
    dst.copy_from(w.reshape(dst.shape()));
  }
  return blocks::merge_heads(o);
}

void write_out(const Params& p, const Tensor& y) {
  const Tensor src = y.contiguous();
  if (p.query_dim == 2)
    blocks::copy_rows(p.out, src.reshape({p.L, p.E}));
  else
    blocks::copy_rows(p.out, p.batch_first ? src : src.transpose(0, 1));
}

}  // namespace bp::ops::mha
