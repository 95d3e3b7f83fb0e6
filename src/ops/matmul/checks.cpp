// The named checks of the matmul implementations (checks.h).

#include "ops/matmul/checks.h"

#include <algorithm>
#include <climits>

#include "backplane/backends/cpu.h"
#include "backplane/precision.h"

namespace bp::ops::matmul::checks {
namespace {

bool dtype_in(const Params& p, Reasons& r, std::initializer_list<DType> allowed, const char* text) {
  if (std::find(allowed.begin(), allowed.end(), p.dtype) != allowed.end()) return true;
  return r.fail(text, dtype_name(p.dtype));
}

bool capability_at_least(Reasons& r, backends::cpu::CpuCapability need) {
  using backends::cpu::CpuCapability;
  const CpuCapability have = backends::cpu::cpu_capability();
  if (static_cast<int>(have) >= static_cast<int>(need)) return true;
  return r.fail([&] {
    return std::string("cpu capability ") + backends::cpu::capability_name(need) +
           " or higher (capped by BACKPLANE_CPU_CAPABILITY / ATEN_CPU_CAPABILITY)";
  }(), backends::cpu::capability_name(have));
}

std::string strides_text(const char* name, const Tensor& t) {
  return std::string(name) + " strides (" + std::to_string(t.stride(-2)) + ", " + std::to_string(t.stride(-1)) + ")";
}

}  // namespace

bool cpu_device(const Params& p, Reasons& r) {
  return p.device.is_cpu() || r.fail("cpu tensors", [&] { return p.device.str(); });
}

bool any_float(const Params& p, Reasons& r) {
  return dtype_in(p, r, {DType::f16, DType::bf16, DType::f32, DType::f64}, "float16, bfloat16, float32 or float64");
}
bool f16_bf16_f32(const Params& p, Reasons& r) {
  return dtype_in(p, r, {DType::f16, DType::bf16, DType::f32}, "float16, bfloat16 or float32");
}
bool f32_or_bf16(const Params& p, Reasons& r) {
  return dtype_in(p, r, {DType::f32, DType::bf16}, "float32 or bfloat16");
}
bool f32_or_f64(const Params& p, Reasons& r) {
  return dtype_in(p, r, {DType::f32, DType::f64}, "float32 or float64");
}

bool capability_avx512(const Params&, Reasons& r) {
  return capability_at_least(r, backends::cpu::CpuCapability::Avx512);
}
bool capability_avx2(const Params&, Reasons& r) { return capability_at_least(r, backends::cpu::CpuCapability::Avx2); }

bool bf16_allowed_for_f32() {
  return precision::resolved(precision::Backend::mkldnn, precision::Op::matmul) == flags::Precision::bf16;
}

bool bf16_permitted(const Params& p, Reasons& r) {
  if (p.dtype != DType::f32 || bf16_allowed_for_f32()) return true;
  return r.fail("fp32 precision 'bf16' permitted for (mkldnn, matmul) (set_float32_matmul_precision('medium') "
                "or mkldnn.matmul.fp32_precision = 'bf16')",
                [] {
                  const auto got = precision::resolved(precision::Backend::mkldnn, precision::Op::matmul);
                  return "'" + std::string(flags::Precision_names[static_cast<int>(got)]) + "' (" +
                         precision::get_float32_matmul_precision() + ")";
                });
}

bool blas_matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, BlasMatrix& out) {
  // A dimension of size 1 may carry any stride: choose the one BLAS likes.
  if (cs == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) {
      out = {false, ld};
      return true;
    }
  }
  if (rs == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) {
      out = {true, ld};
      return true;
    }
  }
  return false;
}

bool blas_layout(const Params& p, Reasons& r) {
  BlasMatrix ma, mb;
  const bool a_ok = blas_matrix(p.m, p.k, p.a.stride(-2), p.a.stride(-1), ma);
  const bool b_ok = blas_matrix(p.k, p.n, p.b.stride(-2), p.b.stride(-1), mb);
  if (a_ok && b_ok) return true;
  return r.fail("a and b each with a unit stride in one dimension and a leading dimension covering the other "
                "(transposed views are fine)",
                [&] { return !a_ok ? strides_text("a", p.a) : strides_text("b", p.b); });
}

bool blas_int_range(const Params& p, Reasons& r) {
  const int64_t biggest = std::max({p.m, p.n, p.k, p.a.stride(-2), p.a.stride(-1), p.b.stride(-2), p.b.stride(-1)});
  return biggest <= INT_MAX || r.fail("dims and strides <= 2147483647 (32-bit BLAS integers)",
                                      [&] { return std::to_string(biggest); });
}

bool mkldnn_enabled(const Params&, Reasons& r) {
  return backends::mkldnn::enabled() || r.fail("mkldnn.enabled = True", "False");
}

std::vector<flags::Id> precision_flags() {
  return {flags::Id::generic_fp32_precision, flags::Id::mkldnn_fp32_precision, flags::Id::mkldnn_matmul_fp32_precision};
}

}  // namespace bp::ops::matmul::checks
