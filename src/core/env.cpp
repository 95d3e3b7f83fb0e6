#include "core/env.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

#include "backplane/log.h"

namespace bp::env {

std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string t = lower(text);
  if (t == "1" || t == "true" || t == "on" || t == "yes") return true;
  if (t == "0" || t == "false" || t == "off" || t == "no") return false;
  return std::nullopt;
}

std::optional<bool> check_torch_bool(const char* name, std::string_view text) {
  if (text == "1") return true;
  if (text == "0") return false;
  log::warn(std::string("ignoring invalid value for boolean env var ") + name + "=" + std::string(text) +
            ": valid values are 0 or 1");
  return std::nullopt;
}

std::optional<long long> parse_int(std::string_view text) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || text.empty()) return std::nullopt;
  return v;
}

}  // namespace bp::env
