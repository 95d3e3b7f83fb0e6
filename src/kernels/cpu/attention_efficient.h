#pragma once
// Memory-efficient attention on the CPU: out = softmax(q·kᵀ·scale + mask)·v
// over key/value blocks with an online softmax (Rabe & Staats,
// "Self-attention does not need O(n²) memory", 2021), so the L x S scores
// are never materialised.
//
// What it adds over the flash kernel (attention_flash.h): it reads q, k and
// v in place as strided views (the scale rides in the score GEMM's alpha,
// and f16/bf16 scores use the GEMM's widening f16/bf16 entry points), so the
// only per-thread memory is one score block, the output accumulators and,
// for f16 one widened value block (bf16: the weights as bf16): O(q_block x (kv_block + Ev) +
// kv_block x Ev). The value head size Ev is independent of E, and the mask
// is any strided additive view (broadcast dims are stride 0).
//
// Arithmetic is in Acc (double for f64, float otherwise). Rows whose every
// key is masked out produce 0, as the math reference does. OpenMP shares
// (batch entry, query block) tasks.

#include <cstdint>
#include <vector>

#include "backplane/dtype.h"
#include "kernels/cpu/attention_flash.h"  // AttnOperand
#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {

struct EfficientAttention {
  DType dtype = DType::f32;  // q, k, v and out: f32, f64, f16 or bf16
  int64_t batch = 1, L = 0, S = 0, E = 0, Ev = 0;
  AttnOperand q, k, v;
  AttnOperand mask;  // additive, Acc type; data null when there is none
  void* out = nullptr;  // rows of Ev contiguous elements
  int64_t out_rs = 0;
  std::vector<int64_t> out_off;
  double scale = 1.0;
  bool causal = false;  // top-left aligned: query i sees keys j <= i
  GemmIsa isa = GemmIsa::generic;
  // The GEMM variant for 16-bit operands (avx512_bf16 for bf16 where the
  // CPU has it: exact products; else isa).
  GemmIsa half_isa = GemmIsa::generic;
  // 384 query rows: the score GEMM packs Kᵀ (a strided transpose) once per
  // query block, which at 128 rows was 19% of bf16 time at L = 4096 (Zen 5);
  // 384 is 4-7% faster than 256 there (f32 and bf16), equal for causal.
  int64_t q_block = 384, kv_block = 256;
};

void efficient_attention(const EfficientAttention& args);

}  // namespace bp::kernels::cpu
