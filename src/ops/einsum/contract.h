#pragma once
// Carrying out a contraction path (the path implementation), and telling
// how it would be carried out (explain), with one plan for both.
//
// Note [Einsum execution]
// Each operand becomes a view with one dimension per label: a repeated
// label is a diagonal (strides added), a dimension of size 1 is dropped
// (it broadcasts, or the label is 1 everywhere). A one-operand step sums
// the labels nothing later needs. A pairwise step first sums what only one
// side has and nothing later needs, then classifies the labels: batch
// (both sides, kept), contracted (both, summed), m (left only), n (right
// only). With contracted labels it is one batched matmul through the
// matmul op, [batch..., M, K] @ [batch..., K, N], where each side is a view
// when its m/k (k/n) labels merge into one dimension in some order, and a
// copy only when they do not; the product is viewed back as [batch...,
// m..., n...]. Without contracted labels (Hadamard and outer products), or
// when M = N = 1 (batched dot products), direct loops do it: a matmul per
// batch entry of that size would be all overhead. Loops accumulate in
// float64. The result is the last intermediate viewed in the output's
// order (like torch.einsum, a permuted view rather than a copy), or a copy
// when it would alias an operand.

#include <string>
#include <vector>

#include "ops/einsum/params.h"

namespace bp::ops::einsum {

// Runs `path` on p's operands; the result in the output's shape.
Tensor execute_path(const Params& p, const Path& path);
// One line per step of `path`: how it would run, with the matmul decision.
// Runs nothing (placeholder tensors stand in for the operands).
std::vector<std::string> describe_path(const Params& p, const Path& path);

}  // namespace bp::ops::einsum
