#pragma once
// The named checks of the sdpa implementations. Each adds one reason,
// "<check>: expected X, got Y", when it fails. The flash:cpu list follows
// PyTorch's use_flash_attention_cpp order (spec §4.10.8 "CPU flash
// constraints"), the efficient:cpu list PyTorch's CUDA
// can_use_efficient_attention where it applies to the CPU (§4.10.6); the
// shape rules judge the caller's tensors (q_in, ...).

#include "backplane/dispatch.h"
#include "ops/sdpa/params.h"

namespace bp::ops::sdpa::checks {

using dispatch::Reasons;

// A number as the reasons and errors print it ("%g": 0.1, 1e-05).
std::string num_text(double x);

// The enable switches ("enabled") and dtypes are building blocks
// (backplane/dispatch_checks.h); these read no flag.
bool no_dropout(const Params& p, Reasons& r);       // "dropout": dropout_p == 0
bool four_dims(const Params& p, Reasons& r);        // "dims": q, k, v 4-D
bool batch_and_heads(const Params& p, Reasons& r);  // "batch_heads": equal batch; heads equal, or GQA
bool mask_shape(const Params& p, Reasons& r);       // "mask_shape": spec §4.10.4 check_attn_mask_shape
bool head_dims_equal(const Params& p, Reasons& r);  // "head_dim": q, k, v last dims equal
bool nonzero_seq_lens(const Params& p, Reasons& r);  // "seq_len": L > 0 and S > 0
bool last_dim_stride(const Params& p, Reasons& r);   // "stride": stride(-1) == 1 (size-1 dims exempt)
dispatch::Check<Params> float_dtype();               // "dtype": f32, f64, bf16, f16

// efficient:cpu only.
bool qk_head_dims(const Params& p, Reasons& r);           // "head_dim": q, k last dims equal, q and v ones > 0
bool last_dim_stride_strict(const Params& p, Reasons& r);  // "stride": stride(-1) == 1, size-1 dims not exempt

}  // namespace bp::ops::sdpa::checks
