#pragma once
// backplane_cuda's one registration entry point (Note [Slots] in
// backplane/dispatch.h): BpCudaApi::register_implementations, which the core
// calls once after loading this library, fills every CUDA slot of every op
// through these functions.

namespace bp::cuda_impl {

void fill_matmul();      // matmul_cuda.cpp: cublas:gemm, cublaslt:gemm
void fill_sdpa_cudnn();  // sdpa_cudnn.cpp: cudnn:sdpa (or "not built" without the frontend)
void fill_sdpa_math();   // sdpa_math_cuda.cpp: math:cuda
void fill_conv_native();  // conv_cuda.cpp: native:depthwise, ref:cuda
void fill_conv_cudnn();   // conv_cudnn.cpp: cudnn:conv (or "not built" without the frontend)

// All of the above.
void register_implementations();

}  // namespace bp::cuda_impl
