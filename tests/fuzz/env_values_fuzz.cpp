// Env values of every flag row (Note [Env parsing]): the first byte picks
// the row and which variable(s) are set, the rest is split into the native
// and vendor texts. Whatever start-up would store must pass the row's
// validation, and a stored value's text must parse back to it.

#include <cstdint>
#include <string>

#include "backplane/error.h"
#include "backplane/flags.h"
#include "core/flags_env.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bp::flags;
  bp::fuzz::quiet();
  if (size < 1) return 0;
  const auto rows = bp::flags::rows();
  const Row& r = rows[(data[0] >> 2) % rows.size()];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto nul = text.find('\0');  // an env var cannot hold NUL: text before it is native, after it vendor
  const std::string first = text.substr(0, nul), second = nul == std::string::npos ? "" : text.substr(nul + 1);
  std::optional<std::string> native, vendor;
  if (data[0] & 1) native = first;
  if (data[0] & 2) vendor = native ? second : first;
  const std::optional<int64_t> v = bp::flags::detail::env_value(r.id, native, vendor);
  if (v) {
    try {
      bp::flags::validate(r.id, *v);
    } catch (const bp::Error&) {
      __builtin_trap();  // start-up would have stored a value the setter refuses
    }
    BP_FUZZ_CHECK(bp::flags::parse(r.id, bp::flags::format(r.id, *v)) == *v);
  }
  try {  // the native parser alone (also what the autotune cache file reads)
    const int64_t p = bp::flags::parse(r.id, first);
    bp::flags::validate(r.id, p);
  } catch (const bp::Error&) {
  }
  return 0;
}
