// cublaslt:gemm — cublasLtMatmul with the compute type and reduction scheme
// the knobs permit, the algorithm from cuBLASLt's heuristic, and the
// cuBLASLt workspace (Note [Row-major GEMM on column-major BLAS]).

#include <cublasLt.h>
#include <memory>
#include <string>

#include "backplane/backends/cuda_workspace.h"
#include "backplane/error.h"
#include "cuda_status.h"
#include "gemm_args.h"
#include "gemm_common.h"
#include "workspace.h"

namespace bp::cuda_impl {
namespace {

cublasLtHandle_t lt_handle_for(int device) {
  return per_thread_handle<cublasLtHandle_t>(device, [] {
    cublasLtHandle_t h = nullptr;
    check_cublas(cublasLtCreate(&h), "cublasLtCreate");
    return h;
  });
}

// RAII owners of the cuBLASLt descriptors.
struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { cublasLtMatrixLayoutDestroy(l); }
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { cublasLtMatmulPreferenceDestroy(p); }
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, DescDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, DescDeleter>;

template <class T>
void set_layout_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, T v) {
  check_cublas(cublasLtMatrixLayoutSetAttribute(l, a, &v, sizeof v), "cublasLtMatrixLayoutSetAttribute");
}

// A column-major layout of rows x cols with leading dimension ld, batched.
Layout make_layout(cudaDataType t, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t batch_stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check_cublas(cublasLtMatrixLayoutCreate(&l, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld),
               "cublasLtMatrixLayoutCreate");
  Layout owned(l);
  if (batch > 1) {
    set_layout_attr(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(batch));
    set_layout_attr(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, batch_stride);
  }
  return owned;
}

}  // namespace

void gemm_cublaslt(const GemmArgs& g) {
  const GemmKnobs knobs = read_gemm_knobs(g.dtype);
  const auto opa = as_blas_operand(g.b);  // cuBLASLt's A is our B (C^T = B^T A^T)
  const auto opb = as_blas_operand(g.a);
  if (!opa || !opb) throw_runtime("cublaslt:gemm", "cublaslt:gemm needs one unit stride per operand");
  check_cuda(cudaSetDevice(g.device), "cudaSetDevice");
  cublasLtHandle_t h = lt_handle_for(g.device);

  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType scale = CUDA_R_32F;
  if (g.dtype == DType::f64) {
    compute = CUBLAS_COMPUTE_64F;
    scale = CUDA_R_64F;
  } else if (g.dtype == DType::f32 && knobs.tf32) {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  } else if (knobs.fp16_accumulation) {
    compute = CUBLAS_COMPUTE_16F;
    scale = CUDA_R_16F;
  }
  cublasLtMatmulDesc_t raw_desc = nullptr;
  check_cublas(cublasLtMatmulDescCreate(&raw_desc, compute, scale), "cublasLtMatmulDescCreate");
  MatmulDesc desc(raw_desc);
  const cublasOperation_t ta = opa->transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = opb->transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(raw_desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
               "cublasLtMatmulDescSetAttribute(TRANSA)");
  check_cublas(cublasLtMatmulDescSetAttribute(raw_desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
               "cublasLtMatmulDescSetAttribute(TRANSB)");

  const cudaDataType t = cuda_data_type(g.dtype);
  // Stored shapes before the op: A' is (n x k) or its transpose, B' is (k x m) or its transpose.
  Layout a_layout = make_layout(t, ta == CUBLAS_OP_N ? g.n() : g.k(), ta == CUBLAS_OP_N ? g.k() : g.n(), opa->ld,
                                g.batch, g.b.batch_stride);
  Layout b_layout = make_layout(t, tb == CUBLAS_OP_N ? g.k() : g.m(), tb == CUBLAS_OP_N ? g.m() : g.k(), opb->ld,
                                g.batch, g.a.batch_stride);
  Layout c_layout = make_layout(t, g.n(), g.m(), g.c_rs, g.batch, g.c_batch_stride);

  cublasLtMatmulPreference_t raw_pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&raw_pref), "cublasLtMatmulPreferenceCreate");
  Preference pref(raw_pref);
  const Workspace ws = gemm_workspace(g.device, WorkspaceUser::cublaslt,
                                      static_cast<size_t>(bp::backends::cuda::effective_cublaslt_workspace_size()));
  const uint64_t ws_bytes = ws.bytes;
  check_cublas(cublasLtMatmulPreferenceSetAttribute(raw_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                    sizeof ws_bytes),
               "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  // Reduced-precision / split-K states (spec 4.2): state 1 keeps only
  // reductions in the compute type or none; state 2 allows no split-K reduction.
  if (knobs.disallow_reduced) {
    const uint32_t mask = knobs.disallow_split_k
                              ? uint32_t(CUBLASLT_REDUCTION_SCHEME_NONE)
                              : uint32_t(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE | CUBLASLT_REDUCTION_SCHEME_NONE);
    check_cublas(cublasLtMatmulPreferenceSetAttribute(raw_pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask,
                                                      sizeof mask),
                 "cublasLtMatmulPreferenceSetAttribute(REDUCTION_SCHEME_MASK)");
  }

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  check_cublas(cublasLtMatmulAlgoGetHeuristic(h, raw_desc, a_layout.get(), b_layout.get(), c_layout.get(),
                                              c_layout.get(), raw_pref, 1, &result, &found),
               "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) {
    throw_runtime("cublaslt:gemm", std::string("cuBLASLt has no algorithm for this ") + dtype_name(g.dtype) +
                                       " GEMM with the current knobs and a workspace of " +
                                       std::to_string(ws.bytes) + " bytes");
  }

  const GemmScalars scalars(g, scale);
  check_cublas(cublasLtMatmul(h, raw_desc, scalars.alpha(), g.b.data, a_layout.get(), g.a.data, b_layout.get(), scalars.beta(), g.c,
                              c_layout.get(), g.c, c_layout.get(), &result.algo, ws.data, ws.bytes, nullptr),
               "cublasLtMatmul");
}

}  // namespace bp::cuda_impl
