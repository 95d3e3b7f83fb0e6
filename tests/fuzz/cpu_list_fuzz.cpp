// The launcher's id lists: sysfs / cgroup cpulists (parse_id_list) and the
// user's --core-list (parse_core_list). Parsed lists hold ids in range,
// sorted and unique (id lists) or unique in order (core lists), and the
// ranges written for numactl / taskset parse back to the same ids.

#include <cstdint>
#include <set>
#include <string_view>

#include "backplane/error.h"
#include "fuzz/fuzz_util.h"
#include "launcher/cpu_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bp::launcher;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<int> ids = parse_id_list(text, "fuzz");
    for (std::size_t i = 0; i < ids.size(); ++i) BP_FUZZ_CHECK(ids[i] >= 0 && (i == 0 || ids[i - 1] < ids[i]));
    BP_FUZZ_CHECK(parse_id_list(format_ranges(ids), "fuzz") == ids);
    BP_FUZZ_CHECK(parse_id_list(join_ids(ids), "fuzz") == ids);
  } catch (const bp::Error&) {
  }
  try {
    const std::vector<int> cores = parse_core_list(text);
    BP_FUZZ_CHECK(!cores.empty());
    BP_FUZZ_CHECK(std::set<int>(cores.begin(), cores.end()).size() == cores.size());
  } catch (const bp::Error&) {
  }
  return 0;
}
