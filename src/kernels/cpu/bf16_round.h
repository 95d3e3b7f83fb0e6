#pragma once
// Finite fp32 -> bf16 bits with round-to-nearest-even: bp::bfloat16_bits_from_float
// (backplane/dtype.h) without its NaN test, for values known to be finite
// (attention weights), so the loops over blocks carry no branch.

#include <cstdint>
#include <cstring>

namespace bp::kernels::cpu {

inline uint16_t finite_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace bp::kernels::cpu
