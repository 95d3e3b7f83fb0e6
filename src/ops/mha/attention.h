#pragma once
// The attention of projected queries, keys and values, shared by both
// implementations: bias_k / bias_v and the zero-attention row appended,
// masks merged, heads split (views), attend (blocks::attend), heads merged.

#include "backplane/tensor.h"
#include "ops/mha/params.h"

namespace bp::ops::mha {

// Whether PyTorch drops attn_mask and asks SDPA for the causal form (Note [is_causal hint]).
bool attend_causal(const Params& p);

// attn_mask and key padding mask merged into one additive mask broadcastable
// to [N, H, L, S + extra] (the extra keys, bias_k and the zero row, are not
// masked), or undefined when there is none.
Tensor merged_mask(const Params& p, int64_t extra);

// q [N, L, E], k and v [N, S, E] (last stride 1). Returns [N, L, E] before
// the output projection; writes p.weights when the caller wants them.
Tensor attention_core(const Params& p, const Tensor& q, const Tensor& k, const Tensor& v);

// A view of rows of a [T, C] tensor as heads: [N, H, len, D] for tokens of
// sequence n at rows n*len ..., columns col0 + h*D ... (no copy).
Tensor head_view(const Tensor& rows, int64_t N, int64_t len, int64_t H, int64_t D, int64_t col0);

// y [N, L, E] batch-first into p.out (the caller's layout).
void write_out(const Params& p, const Tensor& y);

}  // namespace bp::ops::mha
