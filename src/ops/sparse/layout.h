#pragma once
// Pruning, compression and decompression of 2:4 weights in the CPU layout
// (Note [2:4 CPU layout], kernels/cpu/sparse24.h), on the CPU. The public
// faces are backplane/ops/sparse.h and backplane.sparse.

#include <cstdint>

#include "backplane/tensor.h"

namespace bp::ops::sparse {

// Groups of 4 columns per row after padding k to a multiple of 8.
inline int64_t groups_of(int64_t k) { return (k + 7) / 8 * 2; }

// The dtypes a 2:4 weight may have on the CPU: f32, bf16, f16, f64.
bool cpu_dtype(DType d);

// A dense copy of w [n, k] keeping the two entries of largest magnitude in
// every group of 4 consecutive columns of a row (NaN counts as the largest;
// ties keep the lower column), the others zero. `who` names the caller in errors.
Tensor prune(const Tensor& w, const char* who);

struct Compressed {
  Tensor values, meta;
};
// w must already be 2:4 (at most two nonzeros in each group; NaN is nonzero):
// otherwise ValueError naming the first offending row and columns.
Compressed compress(const Tensor& w, const char* who);

// The dense [n, k] weight of a compressed one.
Tensor decompress(const Tensor& values, const Tensor& meta, int64_t k, const char* who);
// The same into dst, n * k contiguous elements of the values' dtype.
void decompress_into(const Tensor& values, const Tensor& meta, int64_t k, const char* who, void* dst);

// ValueError unless values / meta are a compressed weight of k columns
// (shapes, dtypes, device, unit stride along rows); returns n.
int64_t check_compressed(const char* who, const Tensor& values, const Tensor& meta, int64_t k);

}  // namespace bp::ops::sparse
