#include "launcher/distributed.h"

#include <charconv>

#include "backplane/error.h"

namespace bp::launcher {
namespace {

struct RankVariables {
  const char* launcher;
  const char* rank;
  const char* size;
};

constexpr RankVariables kLaunchers[] = {
    {"torchrun", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"Open MPI", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"Slurm", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
};

// Slurm writes SLURM_NTASKS_PER_NODE as "4" or, for heterogeneous nodes,
// "4(x2),3": the leading count is this node's when nodes are alike; we take
// it, which is right for the common homogeneous case.
int parse_count(const std::string& name, const std::string& text, bool allow_slurm_suffix) {
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  bool rest_ok = end == text.data() + text.size() ||
                 (allow_slurm_suffix && (*end == '(' || *end == ','));
  if (text.empty() || ec != std::errc{} || !rest_ok || value < 0)
    throw_bad_value(name, "'" + text + "'", "a non-negative integer");
  return value;
}

}  // namespace

std::optional<LocalRank> detect_local_rank(const EnvMap& env) {
  for (const RankVariables& vars : kLaunchers) {
    auto rank_it = env.find(vars.rank);
    auto size_it = env.find(vars.size);
    if (rank_it == env.end() || size_it == env.end()) continue;
    bool slurm = std::string(vars.launcher) == "Slurm";
    LocalRank local;
    local.rank = parse_count(vars.rank, rank_it->second, false);
    local.world_size = parse_count(vars.size, size_it->second, slurm);
    if (local.world_size < 1 || local.rank >= local.world_size)
      throw_bad_value(vars.rank, rank_it->second,
                      "a rank below " + std::string(vars.size) + "=" + size_it->second);
    local.source = std::string(vars.launcher) + " (" + vars.rank + "=" + rank_it->second + ", " +
                   vars.size + "=" + size_it->second + ")";
    return local;
  }
  return std::nullopt;
}

}  // namespace bp::launcher
