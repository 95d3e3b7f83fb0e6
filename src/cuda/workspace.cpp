#include "workspace.h"

#include <map>
#include <utility>

#include "backplane/backends/cuda_workspace.h"
#include "backplane/tensor.h"

namespace bp::cuda_impl {

Workspace gemm_workspace(int device, WorkspaceUser user, size_t bytes) {
  // Per thread: two threads never share a buffer, whatever streams they use.
  thread_local std::map<std::pair<int, int>, StoragePtr> buffers;
  const bool unified = bp::backends::cuda::unified_workspace();
  const bool blas = user == WorkspaceUser::cublas || user == WorkspaceUser::cublaslt;
  const int slot = unified && blas ? 0 : static_cast<int>(user);
  StoragePtr& buffer = buffers[{device, slot}];
  if (bytes == 0) return {nullptr, 0};
  if (!buffer || buffer->nbytes() < bytes) {
    buffer.reset();  // free before allocating the larger one
    buffer = allocate_storage(Device::cuda(device), bytes);
  }
  return {buffer->data(), buffer->nbytes()};
}

}  // namespace bp::cuda_impl
