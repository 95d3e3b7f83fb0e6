#pragma once
// Reading environment variables (Note [Env parsing]).
//
// Note [Env parsing]
// Env vars are read once, at the first use of what they govern. A malformed
// value produces one warning naming the variable, the value and what is
// allowed, and the default is used: start-up never fails on a bad env var.

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
