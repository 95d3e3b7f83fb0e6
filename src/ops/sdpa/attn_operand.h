#pragma once
// The kernel operand (kernels/cpu/attention_flash.h) of one of the Note
// [SDPA params] views: its row and column strides and, per extended-batch
// entry, its element offset. flash:cpu and efficient:cpu both read their
// inputs this way (broadcast dims are stride 0: read in place).

#include "kernels/cpu/attention_flash.h"
#include "ops/sdpa/params.h"

namespace bp::ops::sdpa {

inline kernels::cpu::AttnOperand attn_operand(const Params& p, const Tensor& t) {
  kernels::cpu::AttnOperand o;
  o.data = t.data(), o.rs = t.stride(-2), o.cs = t.stride(-1);
  o.off.resize(static_cast<std::size_t>(p.batch));
  for (int64_t b = 0; b < p.batch; ++b) o.off[static_cast<std::size_t>(b)] = batch_offset(p, t, b);
  return o;
}

}  // namespace bp::ops::sdpa
