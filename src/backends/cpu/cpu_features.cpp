#include "backends/cpu/cpu_features.h"

#include <algorithm>

#include "backplane_build_config.h"

namespace bp::backends::cpu::detail {

bool CpuFeatures::has(const std::string& name) const {
  return std::find(isa.begin(), isa.end(), name) != isa.end();
}

const CpuFeatures& detected() {
  static const CpuFeatures features = [] {
#if BP_HAVE_CPUINFO
    CpuFeatures f;
    if (detect_with_cpuinfo(f)) return f;
    CpuFeatures fallback = detect_with_builtins();
    fallback.detector += " (cpuinfo failed to initialise)";
    return fallback;
#else
    return detect_with_builtins();
#endif
  }();
  return features;
}

}  // namespace bp::backends::cpu::detail
