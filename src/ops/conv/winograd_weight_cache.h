#pragma once
// winograd:f4x3's transformed weights, kept in backends.cpu.conv_weight_cache.
//
// Note [Winograd weight cache]
// Winograd's weight transform costs the same on every call, whatever the
// batch: 36 x C x K floats written (37.7 MB at 512 x 512 channels) from a
// transposed copy of the weight. On ResNet-50's 512-channel 7 x 7 layers at
// batch 8 it was more than half of a call (10.2 ms a call, 4.5 ms with the
// transform skipped), where a model in a loop of calls passes the same
// weights every time. So U is kept per weight tensor (its address, dtype,
// strides and shape, and the vector width of the kernels), with a copy of
// the fp32 weight it was made from; every call compares the weight's values
// with that copy, exactly (9.4 MB read at 512 x 512, a fraction of the
// transform), and a weight changed in place since, or another weight that
// now lives at the same address, is transformed again and replaces the
// entry. The entry's memory is asked for on huge pages (faulting tens of
// MiB in 4 KiB pages cost more than the transform), so a first call costs
// about what an uncached one does. The results are the same bits either way: the same transform,
// and the GEMMs sum each output in the same order whether U is whole or
// made a block of columns at a time. With caching off (max_size 0), or an
// entry larger than the byte bound, each call transforms U itself, a block
// at a time (Note [Winograd weight blocks]).

#include <memory>
#include <string>

#include "kernels/cpu/conv_winograd.h"
#include "ops/conv/params.h"

namespace bp::ops::conv {

struct WinogradWeight;  // a weight's U and the values it was made from

// The cached U of p's weight for `isa`, made from `w` (p's weight as fp32
// [K][C][3][3]) when absent or stale; nullptr when the cache would not keep
// it (caching off, or larger than its byte bound): the kernel then
// transforms the weight itself.
std::shared_ptr<const WinogradWeight> winograd_weight(const Params& p, kernels::cpu::ConvIsa isa,
                                                      const kernels::cpu::ConvShape& shape, const float* w);
const float* transformed(const WinogradWeight& weight);

// Whether the cache would keep the transform of a c_in -> c_out weight
// (caching on, the entry within the byte bound), counted for the widest
// variant this CPU has: the default order's question (order.cpp), asked
// before any weight is seen.
bool winograd_weight_kept(int64_t c_in, int64_t c_out);

// explain's note on p's weight for winograd:f4x3 with `isa`: whether the
// cache holds its transform (and how large it is), or why every call
// transforms it. Empty when Winograd does not take the problem's kernel.
std::string winograd_weight_note(const Params& p, kernels::cpu::ConvIsa isa);

}  // namespace bp::ops::conv
