#pragma once
// The checks of the CUDA matmul implementations (cublas:gemm,
// cublaslt:gemm): in libbackplane and SDK-free, so they are unit-tested and
// their flags are known without a GPU or the CUDA library; only the calls
// live in backplane_cuda (src/cuda/matmul_cuda.cpp).

#include "backends/cuda/blas_gemm.h"
#include "backplane/dispatch.h"
#include "ops/matmul/params.h"

namespace bp::ops::matmul::cuda_checks {

using dispatch::Reasons;

// The innermost 2-D view of a [batch..., rows, cols] tensor.
cuda_impl::GemmMatrix matrix_of(const Tensor& t, int64_t batch_stride);

// "layout": each operand with a unit stride in one of its last two dims
// (Note [Row-major GEMM on column-major BLAS]).
bool unit_stride_layout(const Params& p, Reasons& r);

// The whole list of cublas:gemm (lt = false) or cublaslt:gemm.
std::vector<dispatch::Check<Params>> gemm_checks(bool lt);
// The flags their runs read (math mode, reductions, workspaces).
std::vector<flags::Id> gemm_run_flags();

}  // namespace bp::ops::matmul::cuda_checks
