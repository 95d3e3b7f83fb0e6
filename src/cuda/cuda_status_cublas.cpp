#include <cublas_v2.h>

#include "cuda_status.h"

namespace bp::cuda_impl {

void check_cublas(int status, const char* call) {
  const auto s = static_cast<cublasStatus_t>(status);
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw_runtime(call, std::string(call) + " failed: " + cublasGetStatusString(s) + " (" + cublasGetStatusName(s) + ")");
  }
}

}  // namespace bp::cuda_impl
