#pragma once
// The GEMM variant the sdpa CPU kernels (flash:cpu, efficient:cpu) run
// their inner products on: one rule for both, so the CPU-capability cap
// (backends.cpu) limits them alike.

#include "backplane/backends/cpu.h"
#include "kernels/cpu/gemm.h"

namespace bp::ops::sdpa {

// The widest fp32/f64 GEMM variant the hardware and the CPU-capability cap
// allow (avx512_bf16 is left out: on f32 it rounds to bf16).
inline kernels::cpu::GemmIsa pick_gemm_isa() {
  using backends::cpu::CpuCapability;
  using kernels::cpu::GemmIsa;
  const int cap = static_cast<int>(backends::cpu::cpu_capability());
  if (cap >= static_cast<int>(CpuCapability::Avx512) && kernels::cpu::gemm_isa_supported(GemmIsa::avx512))
    return GemmIsa::avx512;
  if (cap >= static_cast<int>(CpuCapability::Avx2) && kernels::cpu::gemm_isa_supported(GemmIsa::avx2))
    return GemmIsa::avx2;
  return GemmIsa::generic;
}

// The flag the choice reads, for the run_reads of the kernels that make it
// (the CPU capability cap; Note [Autotune key]).
inline std::vector<flags::Id> gemm_isa_reads() { return {flags::Id::cpu_capability}; }

// For bf16 inputs: avx512_bf16 where avx512 is allowed and the CPU has the
// BF16 dot products. bf16 x bf16 products are exact in fp32, so nothing is
// rounded that the inputs did not already round.
inline kernels::cpu::GemmIsa pick_gemm_isa(DType dtype) {
  using kernels::cpu::GemmIsa;
  const GemmIsa isa = pick_gemm_isa();
  if (dtype == DType::bf16 && isa == GemmIsa::avx512 && kernels::cpu::gemm_isa_supported(GemmIsa::avx512_bf16))
    return GemmIsa::avx512_bf16;
  return isa;
}

}  // namespace bp::ops::sdpa
