// Matmul's per-problem default order (Note [Matmul default order] in order.h).

#include "ops/matmul/order.h"

#include "kernels/cpu/gemm.h"
#include "ops/matmul/params.h"

namespace bp::ops::matmul {
namespace {

// The signature's positions (op.cpp): batch, m, n, k.
enum Dim { kBatch, kM, kN, kK };

// The operands' layout bits, a bias aside (linear's bias does not change who packs what).
uint32_t operand_layout(const dispatch::Problem& p) { return p.layout & ~uint32_t{kBias}; }

// The linear rule's row bound for a dtype (0: the rule does not apply).
int64_t linear_max_rows(DType dtype) {
  return dtype == DType::f32 ? kOnednnLeadLinearMaxRowsF32 : dtype == DType::bf16 ? kOnednnLeadLinearMaxRowsBf16 : 0;
}

// The most rows of `x @ w.T` (depth k) the builtin kernels take without
// packing w: one everywhere (the GEMV), kGemmFewRowsMax where the widest
// kernel for the dtype has few-row products and k is deep enough for them
// (Note [Few-row products] in gemm.cpp).
int64_t builtin_unpacked_rows(DType dtype, int64_t k) {
  using kernels::cpu::GemmIsa;
  static const bool f32 = kernels::cpu::gemm_has_few_rows(GemmIsa::avx512, DType::f32);
  static const bool bf16 = kernels::cpu::gemm_has_few_rows(GemmIsa::avx512_bf16, DType::bf16);
  const bool few = (dtype == DType::f32 && f32) || (dtype == DType::bf16 && bf16);
  return few && k >= kernels::cpu::kGemmFewRowsMinK ? kernels::cpu::kGemmFewRowsMax : 1;
}

}  // namespace

bool openblas_leads(const dispatch::Problem& p) {
  if (!p.device.is_cpu() || p.dtype != DType::f32 || p.ndims != 4) return false;
  static const bool avx2_widest = !kernels::cpu::gemm_isa_supported(kernels::cpu::GemmIsa::avx512);
  const int64_t* d = p.dims;
  return avx2_widest && d[kM] >= 2 && d[kN] >= 2 && d[kN] * d[kK] >= kOpenblasLeadMinNK;
}

bool onednn_leads_linear(const dispatch::Problem& p) {
  if (!p.device.is_cpu() || p.ndims != 4 || operand_layout(p) != kBTransposed) return false;
  const int64_t* d = p.dims;
  return d[kBatch] == 1 && d[kM] > builtin_unpacked_rows(p.dtype, d[kK]) && d[kM] <= linear_max_rows(p.dtype) &&
         d[kN] * d[kK] >= kOnednnLeadLinearMinNK;
}

namespace {

// f32, row-major operands, 2 to kOnednnLeadNarrowMaxN columns and a large A.
bool narrow_shape(const dispatch::Problem& p) {
  if (!p.device.is_cpu() || p.ndims != 4 || p.dtype != DType::f32 || operand_layout(p) != 0) return false;
  const int64_t* d = p.dims;
  return d[kN] >= 2 && d[kN] <= kOnednnLeadNarrowMaxN && d[kM] * d[kK] >= kOnednnLeadNarrowMinMK;
}

// One product whose last strip the builtin kernel computes as dot products
// (a batch may share one packed A, which that path does not read).
bool builtin_narrow_last_strip(const dispatch::Problem& p) {
  return p.dims[kBatch] == 1 &&
         kernels::cpu::gemm_narrow_last_strip(kernels::cpu::GemmIsa::avx512, DType::f32, p.dims[kN]);
}

}  // namespace

bool onednn_leads_narrow(const dispatch::Problem& p) { return narrow_shape(p) && !builtin_narrow_last_strip(p); }

int default_rank(const dispatch::Implementation& impl, const dispatch::Problem& p) {
  if (openblas_leads(p)) return impl.name() == "openblas:gemm" ? 0 : 1;
  if (onednn_leads_linear(p) || onednn_leads_narrow(p)) return impl.name() == "onednn:matmul" ? 0 : 1;
  return 1;
}

std::string default_order_note(const dispatch::Problem& p) {
  if (openblas_leads(p))
    return "default order: openblas:gemm first (f32, n x k = " + std::to_string(p.dims[kN] * p.dims[kK]) +
           " >= " + std::to_string(kOpenblasLeadMinNK) +
           " on a CPU whose widest builtin GEMM is AVX2: OpenBLAS measured 10-70% faster there; "
           "Note [Matmul default order])";
  if (onednn_leads_linear(p))
    return "default order: onednn:matmul first (B is a transposed view, as in x @ w.T, with m = " +
           std::to_string(p.dims[kM]) + " <= " +
           std::to_string(linear_max_rows(p.dtype)) +
           " rows: Backplane's kernels would pack the transposed B on every call for too few rows to amortise it; "
           "Note [Matmul default order])";
  if (onednn_leads_narrow(p))
    return "default order: onednn:matmul first (f32 with n = " + std::to_string(p.dims[kN]) + " <= " +
           std::to_string(kOnednnLeadNarrowMaxN) + " columns and an A of " + std::to_string(p.dims[kM] * p.dims[kK]) +
           " elements: Backplane's kernels would pack A for one or two column strips; Note [Matmul default order])";
  if (narrow_shape(p))
    return "default order: the list's (f32 with n = " + std::to_string(p.dims[kN]) + " <= " +
           std::to_string(kOnednnLeadNarrowMaxN) +
           " columns, one product, whose last column strip Backplane's kernel computes as dot products with A read "
           "in place; Note [Matmul default order])";
  return "default order: the list's (Backplane's kernels first, widest ISA first)";
}

}  // namespace bp::ops::matmul
