// The "cpu" record: the package, its ISA extensions and the capability the
// CPU kernels use (Note [CPU capability]).

#include "backends/cpu/cpu_features.h"
#include "backends/probes.h"
#include "backplane/backends/cpu.h"
#include "backplane/flags.h"

namespace bp::backends::detail {

BackendInfo probe_cpu() {
  const cpu::detail::CpuFeatures& f = cpu::detail::detected();
  BackendInfo b;
  b.name = "cpu";
  b.built = true;
  b.available = true;
  b.features = f.isa;
  Device d;
  d.index = 0;
  d.name = f.model.empty() ? f.vendor + " CPU" : f.model;
  d.description = std::to_string(f.cores) + " cores, " + std::to_string(f.logical) +
                  " logical processors, " + std::to_string(f.packages) +
                  (f.packages == 1 ? " package" : " packages");
  b.devices.push_back(d);
  const flags::Id cap = flags::Id::cpu_capability;
  b.details = {
      {"vendor", f.vendor},
      {"detector", f.detector},
      {"capability detected", cpu::capability_name(cpu::detected_cpu_capability())},
      {"capability cap", flags::format(cap, flags::get_raw(cap))},
      {"capability", cpu::get_cpu_capability()},
      {"avx512_bf16", cpu::has_avx512_bf16() ? "yes" : "no"},
  };
  return b;
}

}  // namespace bp::backends::detail
