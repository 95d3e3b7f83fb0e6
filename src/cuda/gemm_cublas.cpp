// cublas:gemm — cublasGemmStridedBatchedEx_64 with the math mode and compute
// type the knobs permit (Note [Row-major GEMM on column-major BLAS]).

#include <cublas_v2.h>
#include <string>

#include "backplane/backends/cuda_workspace.h"
#include "backplane/error.h"
#include "cuda_status.h"
#include "gemm_args.h"
#include "gemm_common.h"
#include "workspace.h"

namespace bp::cuda_impl {
namespace {

cublasHandle_t handle_for(int device) {
  return per_thread_handle<cublasHandle_t>(device, [] {
    cublasHandle_t h = nullptr;
    check_cublas(cublasCreate(&h), "cublasCreate");
    return h;
  });
}

}  // namespace

void gemm_cublas(const GemmArgs& g) {
  const GemmKnobs knobs = read_gemm_knobs(g.dtype);
  if (knobs.disallow_split_k) {
    throw Error(ErrorKind::Runtime,
                std::string("backplane.backends.cuda.matmul.allow_") + (g.dtype == DType::f16 ? "fp16" : "bf16") +
                    "_reduced_precision_reduction = (False, False) requires the cuBLASLt backend "
                    "(preferred_blas_library('cublaslt'))",
                "cublas:gemm", "(False, False)", "the cuBLASLt backend");
  }
  const auto opa = as_blas_operand(g.b);  // cuBLAS's A is our B (C^T = B^T A^T)
  const auto opb = as_blas_operand(g.a);
  if (!opa || !opb) throw_runtime("cublas:gemm", "cublas:gemm needs one unit stride per operand");

  check_cuda(cudaSetDevice(g.device), "cudaSetDevice");
  cublasHandle_t h = handle_for(g.device);
  check_cublas(cublasSetStream(h, nullptr), "cublasSetStream");
  const Workspace ws = gemm_workspace(g.device, WorkspaceUser::cublas,
                                      static_cast<size_t>(bp::backends::cuda::effective_cublas_workspace_size()));
  check_cublas(cublasSetWorkspace(h, ws.data, ws.bytes), "cublasSetWorkspace");

  int math = knobs.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  if (knobs.disallow_reduced) math |= CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  check_cublas(cublasSetMathMode(h, static_cast<cublasMath_t>(math)), "cublasSetMathMode");

  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (g.dtype == DType::f64) compute = CUBLAS_COMPUTE_64F;
  if (g.dtype == DType::f32 && knobs.tf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  if (knobs.fp16_accumulation) compute = CUBLAS_COMPUTE_16F;

  const GemmScalars scalars(g, compute == CUBLAS_COMPUTE_64F   ? CUDA_R_64F
                               : compute == CUBLAS_COMPUTE_16F ? CUDA_R_16F
                                                               : CUDA_R_32F);
  const cudaDataType t = cuda_data_type(g.dtype);
  check_cublas(cublasGemmStridedBatchedEx_64(
                   h, opa->transpose ? CUBLAS_OP_T : CUBLAS_OP_N, opb->transpose ? CUBLAS_OP_T : CUBLAS_OP_N,
                   g.n(), g.m(), g.k(), scalars.alpha(), g.b.data, t, opa->ld, g.b.batch_stride, g.a.data, t, opb->ld,
                   g.a.batch_stride, scalars.beta(), g.c, t, g.c_rs, g.c_batch_stride, g.batch, compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
}

}  // namespace bp::cuda_impl
