// The checks of the CUDA matmul implementations (checks_cuda.h).

#include "ops/matmul/checks_cuda.h"

#include "backplane/dispatch_checks.h"
#include "backplane/precision.h"

namespace bp::ops::matmul::cuda_checks {
namespace {

using flags::ReducedPrecision;

// Under use_deterministic_algorithms(True), cuBLAS needs
// CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 (spec 5.5); warn_only lets it
// run anyway, with a warning.
bool deterministic_ok(const Params&, int64_t warn_only) {
  return warn_only != 0 || cuda_impl::cublas_deterministic_blocker().empty();
}
std::string deterministic_blocker(const Params&) { return cuda_impl::cublas_deterministic_blocker(); }

// The (False, False) state of allow_{fp16,bf16}_reduced_precision_reduction
// forbids split-K, which only cuBLASLt can honour (spec 4.2).
bool fp16_split_k_ok(const Params& p, int64_t state) {
  return p.dtype != DType::f16 || state != static_cast<int64_t>(ReducedPrecision::no_reduced_no_splitk);
}
bool bf16_split_k_ok(const Params& p, int64_t state) {
  return p.dtype != DType::bf16 || state != static_cast<int64_t>(ReducedPrecision::no_reduced_no_splitk);
}

}  // namespace

cuda_impl::GemmMatrix matrix_of(const Tensor& t, int64_t batch_stride) {
  const int64_t n = t.ndim();
  return {t.data(), t.size(n - 2), t.size(n - 1), t.stride(n - 2), t.stride(n - 1), batch_stride};
}

bool unit_stride_layout(const Params& p, Reasons& r) {
  const bool ok = cuda_impl::as_blas_operand(matrix_of(p.a, 0)) && cuda_impl::as_blas_operand(matrix_of(p.b, 0));
  return ok || r.fail("a unit stride in one of the last two dims of each operand", "a view with none");
}

std::vector<dispatch::Check<Params>> gemm_checks(bool lt) {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  list.push_back({"layout", unit_stride_layout});
  list.push_back(flag_allows<Params>("deterministic", flags::Id::generic_deterministic_algorithms_warn_only,
                                     deterministic_ok,
                                     "CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 under use_deterministic_algorithms(True)",
                                     deterministic_blocker));
  if (!lt) {
    const char* why = "split-K allowed (the (False, False) reduced-precision state needs cuBLASLt)";
    list.push_back(flag_allows<Params>("split-k", flags::Id::cuda_matmul_allow_fp16_reduced_precision_reduction,
                                       fp16_split_k_ok, why));
    list.push_back(flag_allows<Params>("split-k", flags::Id::cuda_matmul_allow_bf16_reduced_precision_reduction,
                                       bf16_split_k_ok, why));
  }
  return list;
}

std::vector<flags::Id> gemm_run_flags() {
  std::vector<flags::Id> ids = precision::path(precision::Backend::cuda, precision::Op::matmul);
  for (flags::Id id : {flags::Id::cuda_matmul_allow_fp16_reduced_precision_reduction,
                       flags::Id::cuda_matmul_allow_bf16_reduced_precision_reduction,
                       flags::Id::cuda_matmul_allow_fp16_accumulation, flags::Id::cuda_cublas_workspace_size,
                       flags::Id::cuda_cublaslt_workspace_size})
    ids.push_back(id);
  return ids;
}

}  // namespace bp::ops::matmul::cuda_checks
