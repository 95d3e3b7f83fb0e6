#pragma once
// Flash attention on the CPU: softmax(q·kᵀ·scale + mask)·v, tiled over query
// and key/value blocks with an online softmax (Dao et al., "FlashAttention",
// 2022; Milakov & Gimelshein, "Online normalizer calculation for softmax",
// 2018), so the L x S score matrix is never materialised. Extra memory is
// per thread: one query block, one score block and the accumulators,
// O(block x (E + Ev + block)), plus converted key/value blocks for
// non-accumulator dtypes. OpenMP shares (batch entry, query block) tasks.
//
// Inputs are strided views addressed per batch entry by element offsets the
// caller computes (so broadcasting and grouped-query layouts are just
// offsets and zero strides). Arithmetic is in Acc (float for f32/f16/bf16,
// double for f64); the inner products run on the GEMM kernels (gemm.h).
// Rows whose every key is masked out produce 0, as the math reference does.

#include <cstdint>
#include <vector>

#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {

enum class AttnElem { f16, bf16, f32, f64 };

struct FlashAttention {
  AttnElem elem = AttnElem::f32;  // q, k, v and out element type (f16/bf16 as raw bits)
  int64_t batch = 1, L = 0, S = 0, E = 0, Ev = 0;
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  const void* mask = nullptr;  // additive, Acc type (float, or double for f64); null when none
  int64_t q_rs = 0, q_cs = 1, k_rs = 0, k_cs = 1, v_rs = 0, v_cs = 1, out_rs = 0;
  int64_t mask_rs = 0, mask_cs = 0;
  // Per batch entry: element offsets into each view.
  std::vector<int64_t> q_off, k_off, v_off, out_off, mask_off;
  double scale = 1.0;
  bool causal = false;  // top-left aligned: query i sees keys j <= i
  GemmIsa isa = GemmIsa::generic;
  int64_t q_block = 64, kv_block = 128;
};

void flash_attention(const FlashAttention& args);

}  // namespace bp::kernels::cpu
