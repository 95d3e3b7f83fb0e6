#pragma once
// Which CPUs each instance gets (spec section 16.4 steps 1-3): from
// --core-list, or from the physical or logical cores of one node or all
// nodes, split by --ninstances / --ncores-per-instance, --latency-mode,
// --throughput-mode or --skip-cross-node-cores, then narrowed to one
// instance by --rank or by the local rank of a distributed launcher.
// A pure function of the options and the topology.

#include <optional>
#include <string>
#include <vector>

#include "launcher/distributed.h"
#include "launcher/options.h"
#include "launcher/topology.h"

namespace bp::launcher {

struct Messages {
  std::vector<std::string> warnings;  // the user may want to act
  std::vector<std::string> notes;     // how a decision was taken
};

struct CoreAssignment {
  int ninstances = 0;                     // instances of the whole job
  std::vector<int> launched;              // indices launched here: all, or the rank's
  std::vector<std::vector<int>> cpus;     // CPUs of each launched instance
  std::optional<int> rank;                // set when only one instance is launched
  std::string rank_source;                // "--rank" or the distributed launcher's variables
  bool set_kmp_affinity = true;           // false when every logical CPU of every node is used
};

// Throws bp::Error (ValueError / RuntimeError) where the spec raises or
// exits: both modes, too many instances, a bad or forbidden core, an
// invalid node id, a rank outside the instances.
CoreAssignment assign_cores(const LaunchOptions& options, const Topology& topology,
                            const std::optional<LocalRank>& local_rank, Messages& messages);

}  // namespace bp::launcher
