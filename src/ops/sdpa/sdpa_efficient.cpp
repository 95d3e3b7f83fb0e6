// efficient:cpu: the memory-efficient kernel (kernels/cpu/attention_efficient.h)
// behind checks modelled on PyTorch's CUDA can_use_efficient_attention
// (spec §4.10.6), governed by cuda.mem_efficient_sdp_enabled (PyTorch's CPU
// chooser ignores that flag; Backplane's CPU has this implementation, see
// docs/differences.md). Beyond flash:cpu it takes any mask that broadcasts
// to the scores and a value head size different from the query's; it does
// not take dropout, which stays with math:any.

#include "kernels/cpu/attention_efficient.h"
#include "ops/sdpa/attn_operand.h"
#include "ops/sdpa/checks.h"
#include "ops/sdpa/fold_heads.h"
#include "ops/sdpa/gemm_isa.h"
#include "backplane/dispatch_checks.h"
#include "ops/sdpa/impls.h"

namespace bp::ops::sdpa {
namespace {

void run_efficient(const Params& p) {
  kernels::cpu::EfficientAttention a;
  a.dtype = p.dtype;
  a.batch = p.batch;
  a.L = p.L, a.S = p.S, a.E = p.E, a.Ev = p.Ev;
  a.q = attn_operand(p, p.q), a.k = attn_operand(p, p.k), a.v = attn_operand(p, p.v);
  if (p.mask.defined()) a.mask = attn_operand(p, p.mask);  // broadcast dims are stride 0: read in place
  const kernels::cpu::AttnOperand out = attn_operand(p, p.out);
  a.out = p.out.data(), a.out_rs = out.rs, a.out_off = out.off;
  a.scale = p.scale;
  a.causal = p.is_causal;
  a.isa = pick_gemm_isa();
  a.half_isa = pick_gemm_isa(p.dtype);
  fold_shared_kv_heads(p, a);  // Note [Folding shared key heads into query rows]
  kernels::cpu::efficient_attention(a);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_efficient_cpu() {
  // Typed Check{...} pushes: GCC 12 crashes (nothrow_spec_p) on a braced list of them here.
  using C = dispatch::Check<Params>;
  std::vector<C> list;
  list.push_back(
      dispatch::checks::enabled<Params>(
          flags::Id::cuda_mem_efficient_sdp_enabled,
          "memory-efficient attention enabled (backends.cuda.enable_mem_efficient_sdp(True))"));
  list.push_back(C{"dims", checks::four_dims});
  list.push_back(C{"head_dim", checks::qk_head_dims});
  list.push_back(C{"seq_len", checks::nonzero_seq_lens});
  list.push_back(C{"stride", checks::last_dim_stride_strict});
  list.push_back(C{"batch_heads", checks::batch_and_heads});
  list.push_back(checks::float_dtype());
  list.push_back(C{"dropout", checks::no_dropout});
  dispatch::Properties props;
  props.workspace = "per thread: one score block and the output accumulators (O(q_block x (kv_block + Ev))), "
                    "plus one widened value block for f16 (the weights as bf16 for bf16)";
  return std::make_unique<dispatch::Impl<Params>>("efficient:cpu", "cpu", props, std::move(list), run_efficient,
                                                  gemm_isa_reads());
}

}  // namespace bp::ops::sdpa
