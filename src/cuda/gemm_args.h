#pragma once
// The CUDA BLAS GEMM calls (src/cuda/gemm_cublas.cpp, gemm_cublaslt.cpp);
// their arguments and knobs are SDK-free: backends/cuda/blas_gemm.h.

#include "backends/cuda/blas_gemm.h"
#include "backplane/dtype.h"

namespace bp::cuda_impl {

// The element type of a float DType (f32 for anything else: callers check
// the dtype first).
inline GemmDtype gemm_dtype(DType d) {
  switch (d) {
    case DType::f64: return GemmDtype::f64;
    case DType::f16: return GemmDtype::f16;
    case DType::bf16: return GemmDtype::bf16;
    default: return GemmDtype::f32;
  }
}

// Run one GEMM; bp::Error (RuntimeError) naming the library call on failure.
void gemm_cublas(const GemmArgs& args);
void gemm_cublaslt(const GemmArgs& args);

}  // namespace bp::cuda_impl
