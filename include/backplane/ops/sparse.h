#pragma once
// 2:4 semi-structured sparse weights and their products (the op "sparse",
// docs/dispatch.md): PyTorch's to_sparse_semi_structured, with products
// dispatched over cusparselt:spmma (CUDA), sparse24:cpu (AVX-512),
// dense:matmul (decompress, then the matmul dispatcher) and ref:any.
//
//   auto w = bp::sparse::to_sparse_semi_structured(weight, /*prune=*/true);
//   bp::Tensor y = bp::sparse::linear(x, w, bias);   // x @ weight.T + bias
//   bp::Tensor z = bp::sparse::mm(w, b);             // weight @ b
//   bp::Tensor d = w.to_dense();                     // the pruned weight
//
// The layout of values and meta is Note [2:4 CPU layout]
// (src/kernels/cpu/sparse24.h). dtypes f32, bf16, f16 (accumulating in fp32), f64.

#include "backplane/dispatch.h"
#include "backplane/tensor.h"

namespace bp::sparse {

struct SemiStructured {
  Tensor values, meta;
  int64_t rows = 0, cols = 0;  // the dense weight's shape
  Tensor to_dense() const;
};

// The dense copy of w [out, in] keeping the 2 largest magnitudes of every
// group of 4 consecutive columns of a row (NaN counts as largest, ties keep
// the lower column).
Tensor prune_semi_structured(const Tensor& w);
// Compresses w [out, in]. Without prune, w must be 2:4 already (ValueError
// naming the first group with more than 2 nonzeros); with prune, it is
// pruned first.
SemiStructured to_sparse_semi_structured(const Tensor& w, bool prune = false);

// x [..., in] @ w.T (+ bias [out]).
Tensor linear(const Tensor& x, const SemiStructured& w, const Tensor& bias = Tensor());
// w @ b, b [in, m].
Tensor mm(const SemiStructured& w, const Tensor& b);
dispatch::Decision explain_linear(const Tensor& x, const SemiStructured& w, const Tensor& bias = Tensor());

}  // namespace bp::sparse
