#pragma once
// The local rank of this launcher under a distributed job launcher. When
// torchrun, Open MPI's mpirun or Slurm's srun start one launcher per rank on
// a node, each launcher takes its own slice of the node's allowed cores
// without being told --rank (an addition to the spec; explicit options win).

#include <map>
#include <optional>
#include <string>

namespace bp::launcher {

using EnvMap = std::map<std::string, std::string>;

struct LocalRank {
  int rank = 0;        // this process's rank among the ranks of this node
  int world_size = 1;  // ranks on this node
  std::string source;  // "torchrun (LOCAL_RANK=1, LOCAL_WORLD_SIZE=2)"
};

// The first of torchrun, Open MPI, Slurm whose two variables are both set.
// nullopt when none is (or only one of a pair is). Throws bp::Error when a
// variable is set to something that is not a rank (a typo would otherwise
// silently put every rank on the same cores).
std::optional<LocalRank> detect_local_rank(const EnvMap& env);

}  // namespace bp::launcher
