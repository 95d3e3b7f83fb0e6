#include "backends/cuda/blas_gemm.h"

#include <cstdlib>
#include <string>

#include "backplane/flags.h"
#include "backplane/precision.h"

namespace bp::cuda_impl {

std::optional<BlasOperand> as_blas_operand(const GemmMatrix& m) {
  // A dimension of size 1 leaves its stride free: any value is as good as the
  // one BLAS wants, so pick the layout that needs no copy.
  const bool unit_cols = m.cs == 1 || m.cols == 1;
  const bool unit_rows = m.rs == 1 || m.rows == 1;
  if (unit_cols && (m.rs >= m.cols || m.rows == 1)) {
    return BlasOperand{false, m.rows == 1 ? std::max<int64_t>(m.cols, 1) : m.rs};
  }
  if (unit_rows && (m.cs >= m.rows || m.cols == 1)) {
    return BlasOperand{true, m.cols == 1 ? std::max<int64_t>(m.rows, 1) : m.cs};
  }
  return std::nullopt;
}

GemmKnobs read_gemm_knobs(DType dtype) {
  namespace mm = bp::backends::cuda::matmul;
  using bp::flags::ReducedPrecision;
  GemmKnobs k;
  switch (dtype) {
    case DType::f32:
      k.tf32 = precision::resolved(precision::Backend::cuda, precision::Op::matmul) == flags::Precision::tf32;
      break;
    case DType::f16:
    case DType::bf16: {
      const ReducedPrecision state = dtype == DType::f16 ? mm::allow_fp16_reduced_precision_reduction()
                                                             : mm::allow_bf16_reduced_precision_reduction();
      k.disallow_reduced = state != ReducedPrecision::allowed;
      k.disallow_split_k = state == ReducedPrecision::no_reduced_no_splitk;
      k.fp16_accumulation = dtype == DType::f16 && mm::allow_fp16_accumulation();
      break;
    }
    case DType::f64: break;
  }
  return k;
}

std::string cublas_deterministic_blocker() {
  if (!bp::backends::generic::deterministic_algorithms()) return "";
  const char* config = std::getenv("CUBLAS_WORKSPACE_CONFIG");
  const std::string value = config ? config : "";
  if (value == ":4096:8" || value == ":16:8") return "";
  return "deterministic algorithms need CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 set before start-up (got " +
         (config ? "'" + value + "'" : std::string("unset")) + ")";
}

}  // namespace bp::cuda_impl
