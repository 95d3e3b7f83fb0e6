#pragma once
// The op "sparse": products with a 2:4 semi-structured weight
// (backplane.sparse.to_sparse_semi_structured; docs/dispatch.md).
//
// Note [Sparse params]
// The front end (sparse.cpp) reduces linear(input, W) and mm(W, B) to one
// problem: C(r, j) = sum over the stored entries of W's row j of
// W(j, c) * X(r, c) (+ bias[j]), for r < m, j < n, with X [m, k] a strided
// view (input flattened to [m, k] for linear; B's transpose for mm) and W in
// the layout of Note [2:4 CPU layout] (kernels/cpu/sparse24.h). `out` is a
// fresh contiguous tensor of the input's dtype holding C(r, j) at
// out.data + r * out_rs + j * out_cs: [..., n] for linear, [n, m] for mm.
// Implementations rebuild out on every run and never read it (autotuning
// runs them several times).

#include <cstdint>

#include "backplane/dispatch.h"
#include "backplane/tensor.h"

namespace bp::ops::sparse {

struct Params {
  Tensor x;             // [m, k] activations (any strides)
  Tensor values, meta;  // the compressed weight: values [n, 2g], meta [n, g/2] int8
  Tensor bias;          // [n], or undefined
  Tensor out;
  int64_t out_rs = 0, out_cs = 0;
  int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::f32;
  Device device = Device::cpu();
};

// Layout bits of the problem dispatch sees (dims: out = n, in = k, n = m).
enum LayoutBits : uint32_t {
  kXTransposed = 1u << 0,  // X's unit stride runs along m (a transposed view)
  kXStrided = 1u << 1,     // X has no unit stride
  kBias = 1u << 2,
  kOutTransposed = 1u << 3,  // mm(W, B): C is stored [n, m]
};
dispatch::Problem problem_of(const Params& p);

// The fp32 buffer an implementation accumulates C into, with out's strides:
// out itself for f32, else a staging buffer (counted in memory_stats()).
struct Staging {
  StoragePtr storage;  // null when c is out
  float* c = nullptr;
};
Staging staging(const Params& p);
// Adds the bias to c and, for 16-bit outputs, rounds c into out.
void finish(const Params& p, const Staging& s);

// The op (after ops::ensure_ops()).
dispatch::Op& sparse_op();

}  // namespace bp::ops::sparse
