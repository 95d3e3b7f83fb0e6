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
void fill_fft();         // fft_cuda.cpp: cufft:dft
void fill_sparse();      // sparse_spmma.cpp: cusparselt:spmma (only in a build with cuSPARSELt)
void fill_linalg();      // linalg_cuda.cpp: cusolver:<routine>, cublas:getrf_batched
void fill_rnn_cudnn();   // rnn_cudnn.cpp: cudnn:rnn (only in a build with cuDNN)

// All of the above.
void register_implementations();

// Why a cuDNN graph-API slot is "not built" in a build without the frontend headers.
inline constexpr const char* kNoCudnnFrontend =
    "the cuDNN frontend headers (PyPI nvidia-cudnn-frontend) were not found at configure time "
    "(BACKPLANE_CUDNN_FRONTEND_DIR)";

}  // namespace bp::cuda_impl
