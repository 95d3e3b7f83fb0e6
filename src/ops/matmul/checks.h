#pragma once
// The named checks of the matmul implementations. Each adds one reason,
// "<check>: expected X, got Y", when it fails (dispatch::Reasons), and says
// which flags it reads so the autotune key holds their values.

#include "backplane/dispatch.h"
#include "ops/matmul/params.h"

namespace bp::ops::matmul::checks {

using dispatch::Check;
using dispatch::Reasons;

bool cpu_device(const Params& p, Reasons& r);            // "device"
bool any_float(const Params& p, Reasons& r);             // "dtype": f16, bf16, f32, f64
bool f16_bf16_f32(const Params& p, Reasons& r);  // "dtype": f16, bf16, f32 (f32-accumulating kernels)
bool f32_or_bf16(const Params& p, Reasons& r);           // "dtype": f32, bf16
bool f32_or_f64(const Params& p, Reasons& r);            // "dtype": f32, f64 (OpenBLAS)
bool capability_avx512(const Params& p, Reasons& r);     // "capability": cpu_capability() >= AVX512
bool capability_avx2(const Params& p, Reasons& r);       // "capability": cpu_capability() >= AVX2
bool bf16_permitted(const Params& p, Reasons& r);        // "precision": f32 needs the bf16 permission
bool blas_layout(const Params& p, Reasons& r);           // "layout": a unit stride in one dim of a and b
bool blas_int_range(const Params& p, Reasons& r);        // "size": dims fit a 32-bit BLAS integer
bool mkldnn_enabled(const Params& p, Reasons& r);        // "enabled": mkldnn.enabled

// The flags the precision check reads (the precision tree's path to (mkldnn, matmul)).
std::vector<flags::Id> precision_flags();

// Whether fp32 products may use bf16 operands here (Note [fp32 precision tree]).
bool bf16_allowed_for_f32();

// Leading dimension and transpose flag for a BLAS call on a strided matrix
// view; false when the view has no unit stride.
struct BlasMatrix {
  bool transposed;
  int64_t ld;
};
bool blas_matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, BlasMatrix& out);

}  // namespace bp::ops::matmul::checks
