#include "backplane/device.h"

#include <charconv>

#include "backplane/error.h"

namespace bp {

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

Device parse_device(std::string_view text) {
  if (text == "cpu" || text == "cpu:0") return Device::cpu();  // "cpu:0", as PyTorch accepts
  if (text == "cuda") return Device::cuda(0);
  constexpr std::string_view kPrefix = "cuda:";
  if (text.starts_with(kPrefix)) {
    std::string_view digits = text.substr(kPrefix.size());
    int index = -1;
    // from_chars rejects signs, spaces and empty input; the pointer check
    // rejects trailing characters ("cuda:1x").
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() &&
        digits.front() != '+' && index >= 0) {
      return Device::cuda(index);
    }
  }
  throw_bad_value("device", "'" + std::string(text) + "'", "'cpu', 'cpu:0', 'cuda' or 'cuda:<index>'");
}

}  // namespace bp
