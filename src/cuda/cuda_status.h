#pragma once
// CUDA / cuBLAS status codes -> bp::Error (RuntimeError) naming the call.

#include <cuda_runtime.h>

#include <string>

#include "backplane/error.h"

namespace bp::cuda_impl {

inline void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess) {
    throw_runtime(call, std::string(call) + " failed: " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
  }
}

// cublasStatus_t and cublasLt share one status type; declared here without
// the cuBLAS headers so files that do not use cuBLAS can include this one.
void check_cublas(int status, const char* call);

}  // namespace bp::cuda_impl
