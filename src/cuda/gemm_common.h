#pragma once
// What cublas:gemm and cublaslt:gemm share: per-thread library handles, the
// CUDA data type of a DType, and alpha/beta in the compute type's scale type.

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <library_types.h>

#include <map>

#include "cuda_status.h"
#include "gemm_args.h"

namespace bp::cuda_impl {

// One handle per (thread, device): handles are not meant to be shared by
// threads that change their settings concurrently. `create` makes one.
template <class Handle, class Create>
Handle per_thread_handle(int device, Create create) {
  thread_local std::map<int, Handle> handles;
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  Handle h = create();
  handles.emplace(device, h);
  return h;
}

inline cudaDataType cuda_data_type(DType d) {
  switch (d) {
    case DType::f32: return CUDA_R_32F;
    case DType::f64: return CUDA_R_64F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

// alpha and beta as the scale type wants them (fp32, fp64 or fp16).
class GemmScalars {
 public:
  GemmScalars(const GemmArgs& g, cudaDataType scale)
      : f64_{g.alpha, g.beta},
        f32_{static_cast<float>(g.alpha), static_cast<float>(g.beta)},
        f16_{__float2half(f32_[0]), __float2half(f32_[1])},
        scale_(scale) {}
  const void* alpha() const { return pick(0); }
  const void* beta() const { return pick(1); }

 private:
  const void* pick(int i) const {
    if (scale_ == CUDA_R_64F) return &f64_[i];
    if (scale_ == CUDA_R_16F) return &f16_[i];
    return &f32_[i];
  }
  double f64_[2];
  float f32_[2];
  __half f16_[2];
  cudaDataType scale_;
};

}  // namespace bp::cuda_impl
