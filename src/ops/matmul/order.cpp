// Matmul's per-problem default order (Note [Matmul default order] in order.h).

#include "ops/matmul/order.h"

#include "kernels/cpu/gemm.h"

namespace bp::ops::matmul {
namespace {

// The signature's positions (op.cpp): batch, m, n, k.
enum Dim { kBatch, kM, kN, kK };

}  // namespace

bool openblas_leads(const dispatch::Problem& p) {
  if (!p.device.is_cpu() || p.dtype != DType::f32 || p.ndims != 4) return false;
  static const bool avx2_widest = !kernels::cpu::gemm_isa_supported(kernels::cpu::GemmIsa::avx512);
  const int64_t* d = p.dims;
  return avx2_widest && d[kM] >= 2 && d[kN] >= 2 && d[kN] * d[kK] >= kOpenblasLeadMinNK;
}

int default_rank(const dispatch::Implementation& impl, const dispatch::Problem& p) {
  return openblas_leads(p) && impl.name() == "openblas:gemm" ? 0 : 1;
}

std::string default_order_note(const dispatch::Problem& p) {
  if (openblas_leads(p))
    return "default order: openblas:gemm first (f32, n x k = " + std::to_string(p.dims[kN] * p.dims[kK]) +
           " >= " + std::to_string(kOpenblasLeadMinNK) +
           " on a CPU whose widest builtin GEMM is AVX2: OpenBLAS measured 10-70% faster there; "
           "Note [Matmul default order])";
  return "default order: the list's (Backplane's kernels first, widest ISA first)";
}

}  // namespace bp::ops::matmul
