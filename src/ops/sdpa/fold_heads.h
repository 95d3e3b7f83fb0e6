#pragma once
// Grouped-query folding shared by flash:cpu and efficient:cpu (sdpa_flash.cpp,
// sdpa_efficient.cpp): the batch entries that share a key/value head become
// query rows of one problem.

#include <cstdint>
#include <vector>

#include "kernels/cpu/attention_flash.h"
#include "ops/sdpa/params.h"

namespace bp::ops::sdpa {

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
// Kernel is kernels::cpu::FlashAttention or EfficientAttention (the same
// operand fields); efficient:cpu folds too, so decode calls cost it what
// they cost flash:cpu.
template <class Kernel>
void fold_shared_kv_heads(const Params& p, Kernel& a) {
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

}  // namespace bp::ops::sdpa
