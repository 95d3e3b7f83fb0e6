#pragma once
// The math composition of SDPA (PyTorch's _scaled_dot_product_attention_math),
// shared by math:any (CPU) and math:cuda (backplane_cuda): scores = q·kᵀ
// through the matmul op, then scale, mask, causal limit, a softmax that
// gives 0 for rows whose every key is masked out, and dropout (one
// device-specific step), then ·v through the matmul op.
//
// Precision: f16/bf16 inputs are widened to fp32 for the whole computation
// unless cuda.fp16_bf16_reduction_math_sdp_allowed is set; then the scores
// and the attention weights are rounded to the input dtype between steps
// (the GEMMs still accumulate in fp32), as PyTorch's math path does.

#include <functional>

#include "ops/sdpa/params.h"

namespace bp::ops::sdpa {

struct MathSteps {
  // In place on contiguous [ext..., L, S] scores of compute_dtype(p.dtype):
  // scale, p.mask, causal limit, safe softmax, dropout (from
  // default_generator(), one number per score, row-major).
  std::function<void(const Params& p, Tensor& scores)> softmax;
  // Writes src (any strides, any float dtype) into dst (same shape,
  // contiguous), converting the dtype. Both on the op's device.
  std::function<void(Tensor& dst, const Tensor& src)> cast_into;
};

void run_math_composition(const Params& p, const MathSteps& steps);

}  // namespace bp::ops::sdpa
