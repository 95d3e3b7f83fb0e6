// CPU capability names (ATEN_CPU_CAPABILITY, BACKPLANE_CPU_CAPABILITY): any
// text gives a valid cap or nothing, and the capability chosen from a cap is
// never above what the hardware has.

#include <cstdint>
#include <string_view>

#include "backplane/backends/cpu.h"
#include "backplane/error.h"
#include "backplane/flags.h"
#include "core/vendor_env.h"
#include "fuzz/fuzz_util.h"

namespace {

void check_cap(int64_t raw) {
  using bp::backends::cpu::CpuCapability;
  BP_FUZZ_CHECK(raw >= 0 && raw < bp::flags::CpuCapabilityCap_count);
  const auto cap = static_cast<bp::flags::CpuCapabilityCap>(raw);
  for (CpuCapability hw : {CpuCapability::Default, CpuCapability::Avx2, CpuCapability::Avx512}) {
    const auto choice = bp::backends::cpu::choose_cpu_capability(hw, cap);
    BP_FUZZ_CHECK(static_cast<int>(choice.capability) <= static_cast<int>(hw));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bp::fuzz::quiet();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto v = bp::flags::parse_aten_cpu_capability("ATEN_CPU_CAPABILITY", text)) check_cap(*v);
  try {
    check_cap(bp::flags::parse(bp::flags::Id::cpu_capability, text));
  } catch (const bp::Error&) {
  }
  return 0;
}
