#pragma once
// What the CPU is and which ISA extensions it has, detected once per process.
//
// Two detectors give the same answer in the same form: cpuinfo (what PyTorch
// uses; src/backends/cpuinfo/, compiled only when the library is found) and
// the compiler's __builtin_cpu_supports (always compiled, the fallback). Both
// check that the OS saves the vector registers, not only the CPUID bits.

#include <string>
#include <vector>

namespace bp::backends::cpu::detail {

struct CpuFeatures {
  std::string detector;  // "cpuinfo" or "compiler builtins"
  std::string vendor;    // "AMD", "Intel", ...
  std::string model;     // "AMD EPYC 9B45"
  int packages = 1;
  int cores = 1;         // physical cores
  int logical = 1;       // logical processors (hardware threads)
  // Detected extensions in kIsaNames order, lower case.
  std::vector<std::string> isa;

  bool has(const std::string& name) const;
};

// The extensions Backplane asks about, in display order. Names follow the
// Linux /proc/cpuinfo flags (avx512_bf16, avx512_vnni, avx512vbmi), so the
// kernel's list is an independent check.
inline constexpr const char* kIsaNames[] = {
    "sse4_2",   "avx",      "f16c",        "fma",         "avx2",        "avx512f",
    "avx512cd", "avx512bw", "avx512dq",    "avx512vl",    "avx512_vnni", "avx512_bf16",
    "avx512vbmi", "avx512ifma",
};

// The process-wide answer: cpuinfo when built in and it initialises, else
// the compiler builtins.
const CpuFeatures& detected();

CpuFeatures detect_with_builtins();
// Defined only when cpuinfo is built in; false when it cannot initialise.
bool detect_with_cpuinfo(CpuFeatures& out);

// Topology and names from Linux's /sys and /proc (the builtin detector's
// source, and cpuinfo's fallback for an empty package name).
void read_linux_topology(CpuFeatures& out);
std::string read_proc_cpuinfo_field(const char* field);

}  // namespace bp::backends::cpu::detail
