#pragma once
// Whether the CPU and OS support F16C. clang before 16 rejects "f16c" in
// __builtin_cpu_supports, so the bit is read from CPUID (leaf 1, ECX bit 29);
// its instructions use the YMM registers, so the OS must save them too,
// which __builtin_cpu_supports("avx") includes.

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace bp::detail {

// Read once: CPUID traps to the hypervisor in a virtual machine.
inline bool cpu_has_f16c() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0 && __builtin_cpu_supports("avx");
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace bp::detail
