#pragma once
// The start-up env reading of the flag table, for tests and the env_values
// fuzzer (tests/fuzz): what a row would take from given env texts.

#include <cstdint>
#include <optional>
#include <string>

#include "backplane/flags.h"

namespace bp::flags::detail {

// The value row `id` takes at start-up when its native env var holds
// `native`, its vendor one `vendor` and the vendor name's ROCm spelling
// `vendor_alias` (nullopt: unset), or nullopt to keep the default; warns as
// start-up does (Note [Env parsing] in core/flags.cpp).
std::optional<int64_t> env_value(Id id, const std::optional<std::string>& native,
                                 const std::optional<std::string>& vendor,
                                 const std::optional<std::string>& vendor_alias = std::nullopt);

}  // namespace bp::flags::detail
