#pragma once
// scaled_dot_product_attention on bp::Tensor with PyTorch's semantics,
// dispatched over Backplane's CPU implementations (flash:cpu,
// efficient:cpu, math:any; docs/dispatch.md "sdpa").
//
//   bp::Tensor o = bp::sdpa(q, k, v);                       // softmax(q·kᵀ/sqrt(E))·v
//   bp::Tensor o = bp::sdpa(q, k, v, mask, 0.0, false);     // bool (True = keep) or additive mask
//   bp::Tensor o = bp::sdpa(q, k, v, {}, 0.0, true);        // causal, top-left aligned
//   std::cout << bp::explain_sdpa(q, k, v).text();          // which implementation, and why
//
// q (…, L, E), k (…, S, E), v (…, S, Ev) → (…, L, Ev); batch dims broadcast.
// attn_mask broadcasts to (…, L, S). scale defaults to 1/sqrt(E).
// enable_gqa lets Hq = q.size(-3) be a multiple of k/v's heads (each
// key/value head serves Hq/Hkv consecutive query heads). dropout_p draws
// from bp::default_generator(). dtypes f32, f64, f16, bf16: f16/bf16 compute
// in fp32 unless cuda.fp16_bf16_reduction_math_sdp_allowed lets the math
// implementation compute in the input dtype.
// Errors: ValueError for bad input (naming the value and what is allowed);
// RuntimeError "No viable backend ..." when flash and math are both
// disabled; dispatch::NoImplementationError (every reason) when no
// implementation accepts the call.

#include <optional>

#include "backplane/dispatch.h"
#include "backplane/tensor.h"

namespace bp {

Tensor sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask = Tensor(),
            double dropout_p = 0.0, bool is_causal = false, std::optional<double> scale = std::nullopt,
            bool enable_gqa = false);

// The decision table of the call above, without running it.
dispatch::Decision explain_sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask = Tensor(),
                                double dropout_p = 0.0, bool is_causal = false,
                                std::optional<double> scale = std::nullopt, bool enable_gqa = false);

}  // namespace bp
