// The ordered list of matmul implementations. Order is the default
// preference (first acceptable wins unless a library is preferred or
// autotuning is on): our own kernels from the widest ISA down, then the
// libraries, then the reference, which accepts every valid problem.

#include "ops/matmul/impl_list.h"

#include "backplane_build_config.h"
#include "ops/matmul/params.h"
#include "backplane/precision.h"

namespace bp::ops::matmul {
namespace {

std::vector<std::string> explain_notes(const dispatch::Problem& p) {
  std::vector<std::string> notes;
  if (p.dtype != DType::f32 || !p.device.is_cpu()) return notes;
  const auto prec = precision::resolved(precision::Backend::mkldnn, precision::Op::matmul);
  if (prec == flags::Precision::tf32)
    notes.push_back("fp32 precision 'tf32' (\"high\") permits TF32, which no CPU has: CPU implementations stay "
                    "exact (fp32 arithmetic)");
  else if (prec == flags::Precision::bf16)
    notes.push_back("fp32 precision 'bf16' (\"medium\") permits bf16 operands with fp32 accumulation: "
                    "builtin:avx512_bf16 and onednn:matmul use it, the others stay exact");
  else
    notes.push_back("fp32 precision permits no reduced arithmetic (\"highest\"): every implementation computes in "
                    "fp32");
  return notes;
}

dispatch::Op& build() {
  using kernels::cpu::GemmIsa;
  dispatch::OpConfig config;
  config.name = "matmul";
  config.preferred_library[static_cast<int>(DeviceType::cpu)] = flags::Id::cpu_preferred_blas_library;
  config.preferred_library[static_cast<int>(DeviceType::cuda)] = flags::Id::cuda_preferred_blas_library;
  config.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  config.notes = explain_notes;
  dispatch::Op& op = dispatch::define_op(config);
  op.add(make_builtin(GemmIsa::avx512_bf16));
  op.add(make_builtin(GemmIsa::avx512));
  op.add(make_builtin(GemmIsa::avx2));
  op.add(make_builtin(GemmIsa::generic));
#if BP_HAVE_OPENBLAS
  op.add(make_openblas_gemm());
#else
  op.add(dispatch::not_built("openblas:gemm", "openblas", "OpenBLAS was not found at configure time"));
#endif
#if BP_HAVE_ONEDNN
  op.add(make_onednn_matmul());
#else
  op.add(dispatch::not_built("onednn:matmul", "onednn", "oneDNN was not found at configure time"));
#endif
  op.add(make_ref());
  return op;
}

// Defined when libbackplane loads, so list_implementations("matmul") and
// saved autotune entries find the op before the first call.
[[maybe_unused]] const bool defined_at_load = (matmul_op(), true);

}  // namespace

dispatch::Op& matmul_op() {
  static dispatch::Op& op = build();
  return op;
}

}  // namespace bp::ops::matmul
