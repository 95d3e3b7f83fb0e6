#pragma once
// The pieces both mha implementations are made of, beyond the matmul and
// sdpa dispatchers they call: the attention of projected q/k/v (through
// sdpa, or spelled out when the caller wants the weights), layer norm,
// activations, residual adds, and their fused forms for the fast path.
// Tensors are contiguous row-major f32 or f64 unless a comment says views.

#include "backplane/tensor.h"
#include "ops/mha/params.h"

namespace bp::ops::mha::blocks {

// Attention of q [N, H, L, D] over k, v [N, H, S, D] (strided views are
// fine). `mask`: additive, broadcastable to [N, H, L, S], or undefined.
// `causal`: a top-left causal mask (only with no mask). Through the sdpa
// dispatcher unless `weights` is wanted: then q·kᵀ and P·v go through the
// matmul dispatcher and *weights receives P [N, H, L, S] (a row that
// attends to nothing is zeros, as sdpa's). Returns [N, H, L, D] (contiguous).
Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal, Tensor* weights);

// dst = src, same shape (at most 4 dims) and dtype, both with last stride 1:
// one memcpy per last-dim row (Tensor::copy_from walks element by element).
void copy_rows(const Tensor& dst, const Tensor& src);

// w [R, C] (2-D, any strides) -> wᵀ [C, R], contiguous, in cache-sized tiles.
Tensor transposed_copy(const Tensor& w);

// [N, H, L, D] -> [N, L, H*D], contiguous.
Tensor merge_heads(const Tensor& o);
// Mean over dim 1 of [N, H, L, S] -> [N, L, S].
Tensor mean_heads(const Tensor& w);

// x += y (same shape).
void add_(Tensor& x, const Tensor& y);
// rows of x (last dim) normalised: (x - mean) / sqrt(var + eps) * w + b (w, b may be undefined).
Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps);
// x += bias (over the last dim), one pass. Note [Bias after the GEMM].
void add_bias_(Tensor& x, const Tensor& bias);
// x = act(x + bias) in one pass (bias may be undefined). `other` is a bug here.
void bias_activation_(Tensor& x, const Tensor& bias, Activation act);
// One pass per row: s = y + bias + residual; out = layer_norm(s) when w is
// given (norm != nullptr), else out = s. `out` may alias `residual`.
void bias_residual_norm(const Tensor& y, const Tensor& bias, const Tensor& residual, const Tensor& norm_w,
                        const Tensor& norm_b, double eps, bool norm, Tensor& out);

}  // namespace bp::ops::mha::blocks
