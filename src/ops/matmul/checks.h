#pragma once
// The matmul checks that read no flag: operand layout and size limits of
// the BLAS libraries. Checks on flags, dtypes and the CPU capability are
// made with the building blocks of backplane/dispatch_checks.h, in op.cpp
// and the implementation files. Each adds one reason, "<check>: expected X,
// got Y", when it fails.

#include "backplane/dispatch.h"
#include "ops/matmul/params.h"

namespace bp::ops::matmul::checks {

using dispatch::Reasons;

bool blas_layout(const Params& p, Reasons& r);     // "layout": a unit stride in one dim of a and b
bool blas_int_range(const Params& p, Reasons& r);  // "size": dims fit a 32-bit BLAS integer

// The precision rule of the bf16 kernels: an f32 product may use bf16
// operands only with the "bf16" permission (Note [fp32 precision tree]);
// a bf16 product is bf16 already.
bool is_f32(const Params& p);
dispatch::Check<Params> bf16_permitted();  // "precision" on (mkldnn, matmul)

// Leading dimension and transpose flag for a BLAS call on a strided matrix
// view; false when the view has no unit stride.
struct BlasMatrix {
  bool transposed;
  int64_t ld;
};
bool blas_matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, BlasMatrix& out);

}  // namespace bp::ops::matmul::checks
