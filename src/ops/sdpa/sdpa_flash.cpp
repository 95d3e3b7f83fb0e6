// flash:cpu: the tiled online-softmax kernel (kernels/cpu/attention_flash.h)
// behind PyTorch's CPU flash checks. Masks are allowed (2-D or 4-D,
// broadcast over batch and heads), as PyTorch's CPU flash allows them;
// dropout is not.

#include "kernels/cpu/attention_flash.h"
#include "ops/sdpa/checks.h"
#include "ops/sdpa/fold_heads.h"
#include "ops/sdpa/attn_operand.h"
#include "ops/sdpa/gemm_isa.h"
#include "backplane/dispatch_checks.h"
#include "ops/sdpa/impls.h"

namespace bp::ops::sdpa {
namespace {

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
