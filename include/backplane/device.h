#pragma once
// Where a tensor's memory lives: the host ("cpu") or one CUDA device
// ("cuda:N"). Parsing and printing use PyTorch's spelling.

#include <compare>
#include <string>
#include <string_view>

namespace bp {

enum class DeviceType : uint8_t { cpu, cuda };
inline const char* device_type_name(DeviceType t) { return t == DeviceType::cpu ? "cpu" : "cuda"; }

struct Device {
  DeviceType type = DeviceType::cpu;
  int index = 0;  // always 0 for cpu

  static constexpr Device cpu() { return Device{DeviceType::cpu, 0}; }
  static constexpr Device cuda(int index = 0) { return Device{DeviceType::cuda, index}; }

  bool is_cpu() const { return type == DeviceType::cpu; }
  bool is_cuda() const { return type == DeviceType::cuda; }
  // "cpu" or "cuda:N".
  std::string str() const;

  friend auto operator<=>(const Device&, const Device&) = default;
};

// Accepts "cpu", "cuda" (= "cuda:0") and "cuda:N" with N a decimal index;
// anything else is a ValueError naming the value and the allowed forms.
Device parse_device(std::string_view text);

}  // namespace bp
