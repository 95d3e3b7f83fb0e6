// torch.backends.cpu's discovery face (Note [CPU capability] in
// backplane/backends/cpu.h).

#include "backplane/backends/cpu.h"

#include "backends/cpu/cpu_features.h"
#include "backplane/flags.h"
#include "backplane/log.h"

namespace bp::backends::cpu {
namespace {

CpuCapability from_features(const detail::CpuFeatures& f) {
  // PyTorch's rule (aten/src/ATen/native/DispatchStub.cpp).
  if (f.has("avx512f") && f.has("avx512vl") && f.has("avx512bw") && f.has("avx512dq") && f.has("fma"))
    return CpuCapability::Avx512;
  if (f.has("avx2") && f.has("fma")) return CpuCapability::Avx2;
  return CpuCapability::Default;
}

std::string cap_env_names() {
  const flags::Row& r = flags::row(flags::Id::cpu_capability);
  return r.vendor_env ? r.env + " / " + r.vendor_env : r.env;
}

}  // namespace

const char* capability_name(CpuCapability c) {
  switch (c) {
    case CpuCapability::Default: return "DEFAULT";
    case CpuCapability::Avx2: return "AVX2";
    case CpuCapability::Avx512: return "AVX512";
  }
  return "DEFAULT";
}

CapabilityChoice choose_cpu_capability(CpuCapability detected, flags::CpuCapabilityCap cap) {
  using flags::CpuCapabilityCap;
  if (cap == CpuCapabilityCap::Auto) return {detected, {}};
  const CpuCapability wanted = cap == CpuCapabilityCap::Avx512 ? CpuCapability::Avx512
                               : cap == CpuCapabilityCap::Avx2 ? CpuCapability::Avx2
                                                               : CpuCapability::Default;
  if (wanted <= detected) return {wanted, {}};
  // PyTorch would obey and risk illegal instructions; Backplane stays within
  // the hardware (DESIGN.md §9).
  return {detected, std::string("CPU capability ") + capability_name(wanted) + " requested by " +
                        cap_env_names() + " is not supported by this CPU; using " +
                        capability_name(detected)};
}

CpuCapability detected_cpu_capability() {
  static const CpuCapability c = from_features(detail::detected());
  return c;
}

CpuCapability cpu_capability() {
  static const CpuCapability c = [] {
    CapabilityChoice choice = choose_cpu_capability(detected_cpu_capability(), capability());
    if (!choice.warning.empty()) log::warn(choice.warning);
    return choice.capability;
  }();
  flags::note_read(flags::Id::cpu_capability);  // the choice depends on the cap (Note [Autotune key])
  return c;
}

std::string get_cpu_capability() { return capability_name(cpu_capability()); }

bool has_avx512_bf16() { return detail::detected().has("avx512_bf16"); }

std::vector<std::string> cpu_features() { return detail::detected().isa; }

}  // namespace bp::backends::cpu
