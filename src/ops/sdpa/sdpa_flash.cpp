// flash:cpu: the tiled online-softmax kernel (kernels/cpu/attention_flash.h)
// behind PyTorch's CPU flash checks. Masks are allowed (2-D or 4-D,
// broadcast over batch and heads), as PyTorch's CPU flash allows them;
// dropout is not.

#include "kernels/cpu/attention_flash.h"
#include "ops/sdpa/checks.h"
#include "ops/sdpa/attn_operand.h"
#include "ops/sdpa/gemm_isa.h"
#include "backplane/dispatch_checks.h"
#include "ops/sdpa/impls.h"

namespace bp::ops::sdpa {
namespace {

// Note [Folding shared key heads into query rows]
// When key and value are broadcast over the innermost batch dim (GQA's group
// of query heads per key/value head, or one K/V for every head), the G query
// heads that share a key/value head are G·L rows of one problem: the kernel
// then streams each key/value block once for all of them instead of once per
// head. Decode-shaped calls (L = 1) gain most: with one query row per head,
// every head read the whole K/V cache alone (32 query heads over 4 K/V
// heads read it 8 times). The heads' rows must continue one another (L = 1,
// or a head stride of L rows) in q, the output and the mask; causal calls
// stay per head, since the causal limit follows the query index.
void fold_shared_kv_heads(const Params& p, kernels::cpu::FlashAttention& a) {
  if (p.is_causal || p.ext_shape.empty()) return;
  const int64_t d = static_cast<int64_t>(p.ext_shape.size()) - 1;
  const int64_t heads = p.ext_shape.back();
  if (heads < 2 || p.k.stride(d) != 0 || p.v.stride(d) != 0) return;
  // The row stride of the folded rows of t, or 0 when they do not continue one another.
  const auto folded_rs = [&](const Tensor& t) -> int64_t {
    if (p.L == 1) return t.stride(d);
    return t.stride(d) == p.L * t.stride(-2) ? t.stride(-2) : 0;
  };
  const int64_t q_rs = folded_rs(p.q), out_rs = folded_rs(p.out), mask_rs = p.mask.defined() ? folded_rs(p.mask) : 1;
  // A zero row stride is fine only where every row is the same (L = 1 broadcast); folding needs distinct q and out rows.
  if (q_rs == 0 || out_rs == 0 || (p.mask.defined() && mask_rs == 0 && p.L > 1)) return;
  const auto every_heads_th = [&](std::vector<int64_t>& off) {
    for (std::size_t b = 0; b * heads < off.size(); ++b) off[b] = off[b * heads];
    off.resize(off.size() / static_cast<std::size_t>(heads));
  };
  for (auto* off : {&a.q.off, &a.k.off, &a.v.off, &a.out_off}) every_heads_th(*off);
  if (a.mask.data) every_heads_th(a.mask.off), a.mask.rs = mask_rs;
  a.q.rs = q_rs, a.out_rs = out_rs;
  a.batch = p.batch / heads;
  a.L = p.L * heads;
}

void run_flash(const Params& p) {
  kernels::cpu::FlashAttention a;
  a.elem = p.dtype;
  a.batch = p.batch;
  a.L = p.L, a.S = p.S, a.E = p.E, a.Ev = p.Ev;
  a.q = attn_operand(p, p.q), a.k = attn_operand(p, p.k), a.v = attn_operand(p, p.v);
  if (p.mask.defined()) a.mask = attn_operand(p, p.mask);
  const kernels::cpu::AttnOperand out = attn_operand(p, p.out);
  a.out = p.out.data(), a.out_rs = out.rs, a.out_off = out.off;
  a.scale = p.scale;
  a.causal = p.is_causal;
  a.isa = pick_gemm_isa(p.dtype);
  fold_shared_kv_heads(p, a);  // Note [Folding shared key heads into query rows]
  kernels::cpu::flash_attention(a);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_flash_cpu() {
  // Typed Check{...} pushes: GCC 12 crashes (nothrow_spec_p) on a braced list of them here.
  using C = dispatch::Check<Params>;
  std::vector<C> list;
  list.push_back(dispatch::checks::enabled<Params>(flags::Id::cuda_flash_sdp_enabled,
                                                   "flash attention enabled (backends.cuda.enable_flash_sdp(True))"));
  list.push_back(C{"dropout", checks::no_dropout});
  list.push_back(C{"dims", checks::four_dims});
  list.push_back(C{"batch_heads", checks::batch_and_heads});
  list.push_back(C{"mask_shape", checks::mask_shape});
  list.push_back(C{"head_dim", checks::head_dims_equal});
  list.push_back(C{"seq_len", checks::nonzero_seq_lens});
  list.push_back(C{"stride", checks::last_dim_stride});
  list.push_back(checks::float_dtype());
  dispatch::Properties props;
  props.workspace = "per thread: one query block, one score block, accumulators (O(block x (E + Ev + block)))";
  return std::make_unique<dispatch::Impl<Params>>("flash:cpu", "cpu", props, std::move(list), run_flash,
                                                  gemm_isa_reads());
}

}  // namespace bp::ops::sdpa
