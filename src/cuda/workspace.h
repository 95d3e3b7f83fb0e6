#pragma once
// Library workspaces on the device: one buffer per (device, thread, user),
// grown to the size asked for and counted by memory_stats (allocated through
// bp::allocate_storage). With the unified workspace (TORCH_CUBLAS_WORKSPACE_CACHE=1, spec 20)
// cuBLAS and cuBLASLt share the buffer; otherwise each has its own. cuDNN
// (cudnn:sdpa's graphs) and cuSPARSELt (cusparselt:spmma) always have their own.

#include <cstddef>

namespace bp::cuda_impl {

enum class WorkspaceUser { cublas, cublaslt, cudnn, cusparselt };

struct Workspace {
  void* data;
  size_t bytes;
};

// At least `bytes` of device memory for `user` on `device`, valid until this
// thread asks again with a larger size.
Workspace gemm_workspace(int device, WorkspaceUser user, size_t bytes);

}  // namespace bp::cuda_impl
