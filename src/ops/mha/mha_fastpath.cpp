// fastpath:cpu: what PyTorch's torch._native_multi_head_attention and
// torch._transformer_encoder_layer_fwd do, behind PyTorch's conditions
// (checks.cpp):
// - one GEMM for the packed q/k/v projection, through the matmul dispatcher;
// - attention through the sdpa dispatcher (sdpa_kernel and the SDP flags apply);
// - the output projection's and linear2's bias, the residual add and the
//   layer norm in one pass per row; linear1's bias and the activation in one;
// - with `nested` (TransformerEncoder's nested-tensor path, spec §7.3) only
//   the valid tokens are computed: they are packed ([T, E], T = the count of
//   tokens the key padding mask keeps), each sequence attends over its own
//   tokens, and the output is unpacked with zeros at the padding, as
//   PyTorch's to_padded_tensor(0) does.
//
// Note [Bias after the GEMM]
// Every GEMM here is a plain matmul(x, W.T) and its bias is added by a pass
// of ours (fused with what follows where something follows): measured on
// the reference machine, one thread, the builtin GEMM took 2x as long for
// linear(x, W, b) as for matmul(x, W.T) at [3072 x 512] @ [512 x 1536]
// (141 ms against 75 ms), while the pass costs about 2 ms.

#include <cstring>
#include <vector>

#include "backplane/ops/matmul.h"
#include "backplane/ops/sdpa.h"
#include "ops/mha/attention.h"
#include "ops/mha/blocks.h"
#include "ops/mha/checks.h"
#include "ops/mha/impls.h"

namespace bp::ops::mha {
namespace {

// The valid tokens of a padded batch: row n*L + i of [N*L, E] for each
// position the mask keeps, sequence by sequence.
struct Packing {
  std::vector<int64_t> rows, offset, length;
};

Packing packing_of(const Params& p) {
  Packing k;
  const Tensor pad = p.kpm_in.to(DType::boolean).contiguous();
  const bool* m = pad.data_ptr<bool>();
  for (int64_t n = 0; n < p.N; ++n) {
    k.offset.push_back(static_cast<int64_t>(k.rows.size()));
    for (int64_t i = 0; i < p.L; ++i)
      if (!m[n * p.L + i]) k.rows.push_back(n * p.L + i);
    k.length.push_back(static_cast<int64_t>(k.rows.size()) - k.offset.back());
  }
  return k;
}

// Copies rows `rows` of src [R, C] into dst (packed) or back (unpacked).
void move_rows(const Tensor& src, const Tensor& dst, const std::vector<int64_t>& rows, bool pack) {
  const std::size_t bytes = static_cast<std::size_t>(src.size(-1)) * src.itemsize();
  const auto* s = static_cast<const char*>(src.data());
  auto* d = static_cast<char*>(dst.data());
  for (std::size_t t = 0; t < rows.size(); ++t) {
    const std::size_t packed = t * bytes, padded = static_cast<std::size_t>(rows[t]) * bytes;
    std::memcpy(d + (pack ? packed : padded), s + (pack ? padded : packed), bytes);
  }
}

// Note [Token blocks]
// Without an attention mask, each sequence attends over its own tokens only,
// so the layer runs block by block: whole sequences, about kBlockRows tokens
// each, go through the projection, attention, feed-forward and norms before
// the next block starts. The temporaries ([rows, 3E] projections, [rows, F]
// hidden) then stay a few MiB instead of growing with the batch (32 MiB
// of hidden activations at batch 32 x 128 tokens, F = 2048). Speed is a
// wash at one thread on the reference machine (process CPU time, encoder
// layer 32 x 128 x 512: 338-360 ms against 351-359 for the whole batch at
// once; 248-268 against 242-251 with 25 % padding): the GEMMs at M = 512
// repack their weights 8 times, which costs about what the smaller, warm
// temporaries save; under the bf16 permission (the GEMMs convert their
// weights on every call) too: 210-215 ms at 512 rows, 216-219 whole.
// Packed (nested) tokens take the same road: a block is consecutive packed rows.
constexpr int64_t kBlockRows = 512;

// Note [Weights transposed once]
// Each GEMM is x @ Wᵀ. With Wᵀ a dense copy rather than the transposed view,
// the builtin GEMM ran about 10 % faster at M = 512 on the reference machine
// (one thread, process CPU time: 7.9 against 8.8 ms for the q/k/v
// projection, 10.8 against 11.8 and 10.4 against 11.4 for the feed-forward
// ones). The copies (3.1 M elements at d_model 512) cost a few ms, so they
// are made once per call, and only when several token blocks reuse them.
struct WeightsT {
  Tensor in, out, l1, l2;  // in_proj_weightᵀ, out_proj.weightᵀ, linear1.weightᵀ, linear2.weightᵀ
};

WeightsT weights_t(const Params& p, int64_t rows) {
  if (rows < 2 * kBlockRows) return {p.in_w.T(), p.out_w.T(), p.l1_w.T(), p.l2_w.T()};
  return {blocks::transposed_copy(p.in_w), blocks::transposed_copy(p.out_w), blocks::transposed_copy(p.l1_w),
          blocks::transposed_copy(p.l2_w)};
}

// Self-attention of x [N*L, E] with masks, up to the output projection, without its bias.
Tensor masked_attention(const Params& p, const WeightsT& w, const Tensor& x) {
  const int64_t E = p.E;
  Tensor qkv = bp::matmul(x, w.in);  // the fused projection: one GEMM, [N*L, 3E]
  blocks::add_bias_(qkv, p.in_b);
  const Tensor q3 = qkv.reshape({p.N, p.L, 3 * E});
  const Tensor attn = attention_core(p, q3.slice(2, 0, E), q3.slice(2, E, 2 * E), q3.slice(2, 2 * E, 3 * E));
  return bp::matmul(attn.reshape({-1, E}), w.out);
}

// The layer after the attention, on rows x [R, E] and the attention's projection a [R, E] (no bias yet): the
// residual adds, the norms and the feed-forward block, fused as the file comment says. Writes y [R, E].
void rest_of_layer(const Params& p, const WeightsT& w, const Tensor& x, const Tensor& a, Tensor y) {
  Tensor x1 = Tensor::empty(x.shape(), p.dtype);
  blocks::bias_residual_norm(a, p.out_b, x, p.n1_w, p.n1_b, p.eps1, !p.norm_first, x1);
  Tensor h = bp::matmul(p.norm_first ? blocks::layer_norm(x1, p.n2_w, p.n2_b, p.eps2) : x1, w.l1);
  blocks::bias_activation_(h, p.l1_b, p.activation);
  blocks::bias_residual_norm(bp::matmul(h, w.l2), p.l2_b, x1, p.n2_w, p.n2_b, p.eps2, !p.norm_first, y);
}


void run_blocks(const Params& p, const Tensor& x, const std::vector<int64_t>& offset,
                const std::vector<int64_t>& length, Tensor& y) {
  const int64_t E = p.E;
  const WeightsT w = weights_t(p, x.size(0));
  std::size_t first = 0;
  while (first < offset.size()) {
    std::size_t last = first;  // sequences [first, last)
    int64_t rows = 0;
    while (last < offset.size() && (rows == 0 || rows + length[last] <= kBlockRows)) rows += length[last++];
    const int64_t r0 = offset[first];
    if (rows > 0) {
      const Tensor xb = x.slice(0, r0, r0 + rows);
      Tensor qkv = bp::matmul(p.norm_first ? blocks::layer_norm(xb, p.n1_w, p.n1_b, p.eps1) : xb, w.in);
      blocks::add_bias_(qkv, p.in_b);
      Tensor attn = Tensor::empty({rows, E}, p.dtype);
      for (std::size_t n = first; n < last; ++n) {
        const int64_t off = offset[n] - r0, len = length[n];
        if (len == 0) continue;
        const Tensor seq = qkv.slice(0, off, off + len);
        const Tensor o = bp::sdpa(head_view(seq, 1, len, p.H, p.D, 0), head_view(seq, 1, len, p.H, p.D, E),
                                  head_view(seq, 1, len, p.H, p.D, 2 * E));
        blocks::copy_rows(head_view(attn.slice(0, off, off + len), 1, len, p.H, p.D, 0), o.contiguous());
      }
      rest_of_layer(p, w, xb, bp::matmul(attn, w.out), y.slice(0, r0, r0 + rows));
    }
    first = last;
  }
}

void run_fastpath(const Params& p) {
  const int64_t E = p.E;
  if (p.kind == Kind::attention) {
    // The conditions guarantee self-attention with packed weights: one projection GEMM.
    Tensor qkv = bp::matmul(p.x.reshape({-1, E}), p.in_w.T());
    blocks::add_bias_(qkv, p.in_b);
    const Tensor q3 = qkv.reshape({p.N, p.L, 3 * E});
    const Tensor attn = attention_core(p, q3.slice(2, 0, E), q3.slice(2, E, 2 * E), q3.slice(2, 2 * E, 3 * E));
    Tensor y = bp::matmul(attn.reshape({-1, E}), p.out_w.T());
    blocks::add_bias_(y, p.out_b);
    write_out(p, y.reshape({p.N, p.L, E}));
    return;
  }
  const Tensor x = p.x.reshape({-1, E});
  if (p.attn_mask.defined() || (p.kpm.defined() && !p.nested)) {  // masks: the whole batch at once
    Tensor y = Tensor::empty(x.shape(), p.dtype);
    const Tensor xin = p.norm_first ? blocks::layer_norm(x, p.n1_w, p.n1_b, p.eps1) : x;
    const WeightsT w = weights_t(p, x.size(0));
    rest_of_layer(p, w, x, masked_attention(p, w, xin), y);
    write_out(p, y.reshape({p.N, p.L, E}));
    return;
  }
  if (!p.nested) {  // every sequence whole
    std::vector<int64_t> offset, length(static_cast<std::size_t>(p.N), p.L);
    for (int64_t n = 0; n < p.N; ++n) offset.push_back(n * p.L);
    Tensor y = Tensor::empty(x.shape(), p.dtype);
    run_blocks(p, x, offset, length, y);
    write_out(p, y.reshape({p.N, p.L, E}));
    return;
  }
  const Packing packing = packing_of(p);
  Tensor packed = Tensor::empty({static_cast<int64_t>(packing.rows.size()), E}, p.dtype);
  move_rows(x, packed, packing.rows, true);
  Tensor y = Tensor::empty(packed.shape(), p.dtype);
  run_blocks(p, packed, packing.offset, packing.length, y);
  Tensor full = Tensor::zeros({p.N * p.L, E}, p.dtype);
  move_rows(y, full, packing.rows, false);
  write_out(p, full.reshape({p.N, p.L, E}));
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_fastpath() {
  dispatch::Properties props;
  props.workspace = "per block of about 512 tokens (Note [Token blocks]): [rows, 3E] projections, [rows, F] hidden; "
                    "with masks, the whole batch's";
  props.calls = {"matmul", "sdpa"};
  return std::make_unique<dispatch::Impl<Params>>("fastpath:cpu", "cpu", props, checks::fastpath_conditions(),
                                                  run_fastpath);
}

}  // namespace bp::ops::mha
