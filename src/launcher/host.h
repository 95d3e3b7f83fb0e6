#pragma once
// What the planner asks of the machine besides its topology: where programs
// and libraries are, whether numactl and memory binding work. Tests replace
// these with fixed answers so a plan can be checked without touching the
// machine; real_host() answers for this machine.

#include <functional>
#include <optional>
#include <string>

#include "launcher/distributed.h"

namespace bp::launcher {

struct Host {
  // An executable by name (searched on PATH) or by path; nullopt if none.
  std::function<std::optional<std::string>(const std::string& name)> find_executable;
  // A regular file at this path.
  std::function<bool(const std::string& path)> is_file;
  // Whether a shell glob pattern matches at least one existing path (LD_PRELOAD entries).
  std::function<bool(const std::string& pattern)> glob_matches;
  // The library lib<name>.so (or a versioned lib<name>.so.N) in the search folders.
  std::function<std::optional<std::string>(const std::string& name)> find_library;
  // Whether `numactl -C <cpu> -m <node> true` succeeds (numactl may be
  // installed yet fail, e.g. when a seccomp profile forbids set_mempolicy).
  std::function<bool(const std::string& numactl, int cpu, int node)> numactl_works;
  // Whether a child may bind its memory to `node` with set_mempolicy.
  std::function<bool(int node)> mempolicy_works;
};

// The answers of this machine, with PATH and the library folders taken from `env`.
Host real_host(const EnvMap& env);

// The environment of this process as a map.
EnvMap current_environment();

}  // namespace bp::launcher
