#include "launcher/options.h"

#include "backplane/error.h"

namespace bp::launcher {

const char* bind_mode_name(BindMode mode) {
  switch (mode) {
    case BindMode::automatic: return "auto";
    case BindMode::numactl: return "numactl";
    case BindMode::taskset: return "taskset";
    case BindMode::direct: return "direct";
    case BindMode::none: return "none";
  }
  return "?";
}

BindMode parse_bind_mode(const std::string& text) {
  for (BindMode mode : {BindMode::automatic, BindMode::numactl, BindMode::taskset,
                        BindMode::direct, BindMode::none})
    if (text == bind_mode_name(mode)) return mode;
  throw_bad_value("--bind", "'" + text + "'", "one of auto, numactl, taskset, direct, none");
}

}  // namespace bp::launcher
