#pragma once
// The loop of the per-ISA conversion bodies (convert_<isa>.cpp): n elements
// W at a time, the last n % W through one more block on zero-padded copies.
// (The generic loop, which the tails used to take, converts f16 through a
// function call per element: on a 56-wide row the last 8 elements cost more
// than the first 48.)

#include <cstdint>
#include <cstring>

namespace bp::kernels::cpu::detail {

// block(src, dst) converts W elements.
template <int W, class In, class Out, class Block>
void convert_by_blocks(const In* src, Out* dst, int64_t n, Block block) {
  int64_t i = 0;
  for (; i + W <= n; i += W) block(src + i, dst + i);
  if (i == n) return;
  const auto rest = static_cast<std::size_t>(n - i);
  alignas(64) In in[W] = {};
  alignas(64) Out out[W];
  std::memcpy(in, src + i, rest * sizeof(In));
  block(in, out);
  std::memcpy(dst + i, out, rest * sizeof(Out));
}

}  // namespace bp::kernels::cpu::detail
