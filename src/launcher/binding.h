#pragma once
// How instances are pinned (spec section 16.4 step 4, extended): numactl if
// it works here, else taskset, as the spec says; where neither is usable or
// both are disabled, direct binding (the child sets its own affinity and
// memory policy) instead of the spec's exit(-1). --bind chooses explicitly.

#include <string>
#include <vector>

#include "launcher/core_selection.h"
#include "launcher/host.h"
#include "launcher/options.h"
#include "launcher/topology.h"

namespace bp::launcher {

struct BindingChoice {
  BindMode mode = BindMode::none;  // never `automatic` once chosen
  std::string tool;                // numactl or taskset path
  bool binds_memory = false;       // memory policy set to the instance's nodes
  std::string reason;              // why this mode, for the plan
};

// Throws bp::Error when an explicit --bind tool is missing or does not work.
BindingChoice choose_binding(const LaunchOptions& options, const Topology& topology,
                             const Host& host, Messages& messages);

// The command prefix of one instance: {numactl, -C, 0-3, -m, 0},
// {taskset, -c, 0-3}, or nothing for direct and none.
std::vector<std::string> binding_prefix(const BindingChoice& binding, const std::vector<int>& cpus,
                                        const std::vector<int>& memory_nodes);

}  // namespace bp::launcher
