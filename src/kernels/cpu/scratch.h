#pragma once
// Note [Kernel scratch]
// Kernels whose workspaces are large (Winograd's transformed weights and
// tiles: tens of MiB for wide layers) reuse one buffer per thread and slot
// across calls: a fresh block that large is mapped by the C library and
// faulted in page by page on every call, which costs as much as a small
// convolution. A slot grows to the largest size asked of it and lives until
// its thread exits; it is allocated through bp::allocate_storage, so
// memory_stats() counts it while it lives. A caller owns a slot's contents
// until it asks for that slot again on the same thread (kernels do not
// nest, so one call never meets another's slot).

#include <cstddef>

#include "backplane/tensor.h"

namespace bp::kernels::cpu {

enum class ScratchSlot {
  winograd_weights, winograd_input, winograd_output, direct_weights, direct_input,
  rnn_projection, rnn_panels,  // packed:cpu (src/ops/rnn): a layer's input projections, its recurrent panels;
                               // onednn:rnn: its weight staging and reordered weights (never inside packed:cpu)
  sparse24_x, sparse24_values, sparse24_w,  // the 2:4 kernels (sparse24*.cpp): packed X, W's values
                                            // rounded to bf16, a thread's transposed block of W
  matmul_staging,  // the fp32 accumulators of an f16/bf16 matmul (src/ops/matmul/params.cpp)
  matmul_shared_a,  // a batch's broadcast A, packed once (Note [GEMM shared A] in gemm.cpp)
  conv_staged_input, conv_staged_output,  // conv's fp32 copies of input and output (Note [Conv staging])
  count
};

// At least `floats` floats, 64-byte aligned, uninitialised.
float* scratch(ScratchSlot slot, std::size_t floats);

// scratch() up to kScratchKeepBytes; a larger area is allocated for the
// call and held in `owned` (which the caller keeps while it uses the area),
// so one huge call does not pin its area for the thread's life. Counted in
// memory_stats() either way. floats > 0.
inline constexpr std::size_t kScratchKeepBytes = std::size_t{64} << 20;
float* bounded_scratch(ScratchSlot slot, std::size_t floats, StoragePtr& owned);

}  // namespace bp::kernels::cpu
