// builtin:avx512_bf16 / avx512 / avx2 / generic: Backplane's own packed GEMM
// (src/kernels/cpu/gemm.h), one entry per ISA variant.
//
// Availability is the hardware's answer (gemm_isa_supported); the CPU
// capability cap (ATEN_CPU_CAPABILITY) is a check, so explain shows it.
// avx512_bf16 multiplies bf16 operands: native for bf16 inputs, and for f32
// inputs only with the "bf16" precision permission (Note [fp32 precision tree]).

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/scratch.h"
#include "ops/matmul/checks.h"
#include "backplane/dispatch_checks.h"
#include "ops/matmul/impls.h"

namespace bp::ops::matmul {
namespace {

using kernels::cpu::GemmIsa;
using kernels::cpu::MatView;

// A batch whose A is broadcast over every batch dim (Note [GEMM shared A]):
// A packed once into a kernel scratch slot, or nullptr where the GEMM would
// not pack it (or there is one product).
template <GemmIsa Isa>
const void* shared_a(const Params& p) {
  if (p.batch < 2) return nullptr;
  for (std::size_t d = 0; d < p.batch_shape.size(); ++d)
    if (p.batch_shape[d] > 1 && p.a.strides()[d] != 0) return nullptr;
  const int64_t a_rs = p.a.stride(-2), a_cs = p.a.stride(-1);
  const std::size_t bytes =
      kernels::cpu::gemm_shared_a_bytes(Isa, p.dtype, p.m, p.n, p.k, a_rs, a_cs, p.b.stride(-2), p.b.stride(-1));
  if (bytes == 0) return nullptr;
  float* dst = kernels::cpu::scratch(kernels::cpu::ScratchSlot::matmul_shared_a, (bytes + 3) / 4);
  kernels::cpu::gemm_pack_shared_a(Isa, p.dtype, p.a.data(), a_rs, a_cs, p.m, p.k, dst);
  return dst;
}

template <GemmIsa Isa>
void run_builtin(const Params& p) {
  const void* packed_a = shared_a<Isa>(p);
  for_each_gemm(p, [&](const Gemm2D& g) {
    const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
    switch (p.dtype) {
      case DType::f64:
        kernels::cpu::gemm_f64(Isa, {static_cast<const double*>(g.a), p.m, p.k, g.a_rs, g.a_cs},
                               {static_cast<const double*>(g.b), p.k, p.n, g.b_rs, g.b_cs},
                               {static_cast<double*>(g.c), p.m, p.n, g.ldc, 1}, g.alpha, g.beta, packed_a);
        break;
      case DType::f32:
        kernels::cpu::gemm_f32(Isa, {static_cast<const float*>(g.a), p.m, p.k, g.a_rs, g.a_cs},
                               {static_cast<const float*>(g.b), p.k, p.n, g.b_rs, g.b_cs},
                               {static_cast<float*>(g.c), p.m, p.n, g.ldc, 1}, alpha, beta, packed_a);
        break;
      case DType::bf16:
      case DType::f16: {
        auto* fn = p.dtype == DType::bf16 ? &kernels::cpu::gemm_bf16 : &kernels::cpu::gemm_f16;
        // The GEMM rounds finished tiles into the output itself where it can
        // (Note [GEMM rounding epilogue]); otherwise the batch loop does.
        const bool rounded =
            fn(Isa, {static_cast<const uint16_t*>(g.a), p.m, p.k, g.a_rs, g.a_cs},
               {static_cast<const uint16_t*>(g.b), p.k, p.n, g.b_rs, g.b_cs},
               {static_cast<float*>(g.c), p.m, p.n, g.ldc, 1}, alpha, beta, {g.out16, g.ldc}, packed_a);
        if (g.rounded != nullptr) *g.rounded = rounded;
        break;
      }
      default: throw_bad_value("matmul", dtype_name(p.dtype), "float16, bfloat16, float32 or float64");
    }
  }, Isa);  // the rounding of 16-bit outputs under the same ISA (and cap)
}

std::optional<dispatch::Availability> hardware(GemmIsa isa) {
  if (kernels::cpu::gemm_isa_supported(isa)) return dispatch::Availability{true, true, ""};
  return dispatch::Availability{true, false,
                                std::string("not available: this CPU lacks the ") + kernels::cpu::gemm_isa_name(isa) +
                                    " instructions"};
}

template <GemmIsa Isa>
std::unique_ptr<dispatch::Implementation> make() {
  using namespace dispatch::checks;
  using backends::cpu::CpuCapability;
  std::vector<dispatch::Check<Params>> list;
  dispatch::Properties props;
  props.workspace = "packed panels of A and B (per thread, reused; a broadcast A packed once per call)";
  if constexpr (Isa == GemmIsa::avx512_bf16) {
    list.push_back(dtype_in<Params>({DType::f32, DType::bf16}));
    list.push_back(cpu_capability_at_least<Params>(CpuCapability::Avx512));
    list.push_back(checks::bf16_permitted());
    props.reduced = dispatch::kBf16;
  } else {
    list.push_back(dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
    if constexpr (Isa == GemmIsa::avx512) list.push_back(cpu_capability_at_least<Params>(CpuCapability::Avx512));
    if constexpr (Isa == GemmIsa::avx2) list.push_back(cpu_capability_at_least<Params>(CpuCapability::Avx2));
  }
  return std::make_unique<dispatch::Impl<Params>>(
      std::string("builtin:") + kernels::cpu::gemm_isa_name(Isa), "cpu", props, std::move(list), run_builtin<Isa>,
      std::vector<flags::Id>{}, [] { return hardware(Isa); });
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_builtin(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::avx512_bf16: return make<GemmIsa::avx512_bf16>();
    case GemmIsa::avx512: return make<GemmIsa::avx512>();
    case GemmIsa::avx2: return make<GemmIsa::avx2>();
    case GemmIsa::generic: return make<GemmIsa::generic>();
  }
  throw_bad_value("make_builtin", kernels::cpu::gemm_isa_name(isa), "a GemmIsa");
}

}  // namespace bp::ops::matmul
