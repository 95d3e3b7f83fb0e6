#pragma once
// A GEMM as the CUDA BLAS implementations (cublas:gemm, cublaslt:gemm) take
// it, and the knobs that govern them. SDK-free (part of libbackplane, so it
// is unit-tested without a GPU); the calls themselves live in src/cuda.
//
// Note [Row-major GEMM on column-major BLAS]
// Backplane's matrices are row-major strided views; cuBLAS is column-major.
// A row-major m x n matrix with row stride ld is the column-major n x m
// matrix (its transpose) with leading dimension ld. So C = A·B is computed
// as C^T = B^T·A^T: cuBLAS's (m, n, k) are our (n, m, k), its A is our B and
// its B our A. An operand whose column stride is 1 goes in untransposed; one
// whose row stride is 1 (a transposed view) goes in with op T, so transposes
// never copy. C needs a unit column stride.

#include <cstdint>
#include <optional>
#include <string>

#include "backplane/dtype.h"

namespace bp::cuda_impl {


// A strided matrix in device memory: element (i, j) at data[i*rs + j*cs];
// batch item b starts batch_stride elements further.
struct GemmMatrix {
  const void* data;
  int64_t rows, cols, rs, cs, batch_stride;
};

struct GemmArgs {
  DType dtype;  // of A, B and C
  int device;
  int64_t batch = 1;
  GemmMatrix a;     // m x k
  GemmMatrix b;     // k x n
  void* c;          // m x n, unit column stride
  int64_t c_rs, c_batch_stride;
  double alpha = 1, beta = 0;  // C = alpha A·B + beta C; beta == 0 never reads C
  int64_t m() const { return a.rows; }
  int64_t n() const { return b.cols; }
  int64_t k() const { return a.cols; }
};

// How one operand reaches column-major BLAS (Note [Row-major GEMM on
// column-major BLAS]); nullopt when neither stride is 1 (the caller copies).
struct BlasOperand {
  bool transpose;
  int64_t ld;
};
std::optional<BlasOperand> as_blas_operand(const GemmMatrix& m);

// The knobs of torch.backends.cuda.matmul as they apply to one GEMM, read
// from the flag table (the implementations declare these flags as read).
struct GemmKnobs {
  bool tf32 = false;                  // fp32: cuda.matmul fp32_precision resolves to tf32
  bool disallow_reduced = false;      // fp16/bf16: reduced-precision reductions forbidden
  bool disallow_split_k = false;      // fp16/bf16: split-K forbidden as well (cuBLASLt only)
  bool fp16_accumulation = false;     // fp16: accumulate in fp16
};
GemmKnobs read_gemm_knobs(DType dtype);

// Why deterministic mode forbids cuBLAS here ("" when it does not): with
// use_deterministic_algorithms(True), CUBLAS_WORKSPACE_CONFIG must be exactly
// ":4096:8" or ":16:8" (spec 5.5; a size set through cublas_workspace_size()
// does not count, as in PyTorch).
std::string cublas_deterministic_blocker();

}  // namespace bp::cuda_impl
