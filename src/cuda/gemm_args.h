#pragma once
// The CUDA BLAS GEMM calls (src/cuda/gemm_cublas.cpp, gemm_cublaslt.cpp);
// their arguments and knobs are SDK-free: backends/cuda/blas_gemm.h.

#include "backends/cuda/blas_gemm.h"
#include "backplane/dtype.h"

namespace bp::cuda_impl {

// Run one GEMM; bp::Error (RuntimeError) naming the library call on failure.
void gemm_cublas(const GemmArgs& args);
void gemm_cublaslt(const GemmArgs& args);

}  // namespace bp::cuda_impl
