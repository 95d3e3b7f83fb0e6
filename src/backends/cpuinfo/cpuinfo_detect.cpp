// The preferred CPU detector: cpuinfo, as PyTorch uses (compiled only when
// the library is found; Note [Source layout and globbing]).

#include <cpuinfo.h>

#include <utility>

#include "backends/cpu/cpu_features.h"

namespace bp::backends::cpu::detail {
namespace {

const char* vendor_name(enum cpuinfo_vendor v) {
  switch (v) {
    case cpuinfo_vendor_amd: return "AMD";
    case cpuinfo_vendor_intel: return "Intel";
    case cpuinfo_vendor_hygon: return "Hygon";
    case cpuinfo_vendor_via: return "VIA";
    default: return "unknown";
  }
}

}  // namespace

bool detect_with_cpuinfo(CpuFeatures& f) {
  if (!cpuinfo_initialize()) return false;
  f.detector = "cpuinfo";
  const cpuinfo_core* core = cpuinfo_get_core(0);
  f.vendor = core ? vendor_name(core->vendor) : "unknown";
  const cpuinfo_package* package = cpuinfo_get_package(0);
  f.model = package ? package->name : "";
  // cpuinfo leaves the name empty for CPUs it does not know; the kernel's
  // model name is better than nothing.
  if (f.model.empty()) f.model = read_proc_cpuinfo_field("model name");
  f.packages = int(cpuinfo_get_packages_count());
  f.cores = int(cpuinfo_get_cores_count());
  f.logical = int(cpuinfo_get_processors_count());
  const std::pair<const char*, bool> found[] = {
      {"sse4_2", cpuinfo_has_x86_sse4_2()},
      {"avx", cpuinfo_has_x86_avx()},
      {"f16c", cpuinfo_has_x86_f16c()},
      {"fma", cpuinfo_has_x86_fma3()},
      {"avx2", cpuinfo_has_x86_avx2()},
      {"avx512f", cpuinfo_has_x86_avx512f()},
      {"avx512cd", cpuinfo_has_x86_avx512cd()},
      {"avx512bw", cpuinfo_has_x86_avx512bw()},
      {"avx512dq", cpuinfo_has_x86_avx512dq()},
      {"avx512vl", cpuinfo_has_x86_avx512vl()},
      {"avx512_vnni", cpuinfo_has_x86_avx512vnni()},
      {"avx512_bf16", cpuinfo_has_x86_avx512bf16()},
      {"avx512vbmi", cpuinfo_has_x86_avx512vbmi()},
      {"avx512ifma", cpuinfo_has_x86_avx512ifma()},
  };
  for (const auto& [name, yes] : found)
    if (yes) f.isa.push_back(name);
  return true;
}

}  // namespace bp::backends::cpu::detail
