#pragma once
// torch.backends.cpu, the discovery half: which ISA level the CPU kernels use.
// (The knobs of this module, preferred_blas_library / benchmark /
// benchmark_limit / capability, are flag rows: backplane/flags.h.)
//
// Note [CPU capability]
// The capability is the highest of DEFAULT < AVX2 < AVX512 the hardware
// supports (PyTorch's rule: AVX512 needs avx512f, vl, bw, dq and fma; AVX2
// needs avx2 and fma), lowered by the env-only cap of flag row
// cpu.capability (BACKPLANE_CPU_CAPABILITY, or PyTorch's
// ATEN_CPU_CAPABILITY). Unlike PyTorch, a cap above what the hardware supports
// does not raise the level (that would run illegal instructions): it warns
// once and uses the hardware's level. Computed once per process.

#include <string>
#include <vector>

#include "backplane/detail/flag_types.h"

namespace bp::backends::cpu {

enum class CpuCapability : int { Default = 0, Avx2 = 1, Avx512 = 2 };

// PyTorch's spelling: "DEFAULT", "AVX2", "AVX512".
const char* capability_name(CpuCapability c);

// The level the CPU kernels use (Note [CPU capability]).
CpuCapability cpu_capability();
// cpu_capability() as PyTorch's string.
std::string get_cpu_capability();
// What the hardware supports, ignoring the cap.
CpuCapability detected_cpu_capability();

// The rule of Note [CPU capability], pure so it can be tested on any CPU:
// the chosen level and, when the cap asks for more than the hardware has,
// the warning to give (empty otherwise).
struct CapabilityChoice {
  CpuCapability capability;
  std::string warning;
};
CapabilityChoice choose_cpu_capability(CpuCapability detected, flags::CpuCapabilityCap cap);

// Whether the CPU has AVX512_BF16 (the bf16 dot-product kernels need it).
bool has_avx512_bf16();
// Every ISA extension detected, lower case ("avx2", "avx512f", "avx512_bf16", ...).
std::vector<std::string> cpu_features();

}  // namespace bp::backends::cpu
