#pragma once
// The direct loops of einsum's path implementation (Note [Einsum
// execution] in contract.h): out[o] = sum over s of the product of the
// sides at (o, s), for one side (a reduction) or two, over strided views of
// any float dtype, accumulated in float64 and rounded once into `out`.

#include <vector>

#include "backplane/tensor.h"

namespace bp::ops::einsum {

struct LoopSide {
  const void* data;                   // element [0, ...] of the view
  std::vector<int64_t> out_strides;   // per output dimension (0 where the side lacks it)
  std::vector<int64_t> sum_strides;   // per summed dimension
};

// out: contiguous, of shape out_shape and the sides' dtype.
void contract_loops(const std::vector<LoopSide>& sides, const Shape& out_shape, const Shape& sum_shape, Tensor& out);

}  // namespace bp::ops::einsum
