#pragma once
// Reading environment variables (Note [Env parsing]).
//
// Note [Env parsing]
// Env vars are read once, at the first use of what they govern. A malformed
// value produces one warning naming the variable, the value and what is
// allowed, and the default is used: start-up never fails on a bad env var.
// Every value, from the native BACKPLANE_* name or the PyTorch / vendor one,
// passes its flag row's validation (the domain the setter checks), and
// numbers are parsed with overflow checks.
// One rule for case: names (enum values such as "bf16", "cublaslt",
// priority orders) are case-sensitive everywhere, in env vars as in setters
// and scopes, as PyTorch's are ("BF16" is refused with a hint); only the
// native boolean env vars also take true/false, on/off, yes/no in any case,
// the words shells and CMake use.

#include <optional>
#include <string>
#include <string_view>

namespace bp::env {

std::optional<std::string> get(const char* name);
// 1/0, true/false, on/off, yes/no (any case); nullopt when not one of those.
std::optional<bool> parse_bool(std::string_view text);
// PyTorch's strict boolean env check: exactly "1" or "0", else a warning and nullopt.
std::optional<bool> check_torch_bool(const char* name, std::string_view text);
std::optional<long long> parse_int(std::string_view text);
std::string lower(std::string_view text);

}  // namespace bp::env
