#include "launcher/core_selection.h"

#include <algorithm>
#include <map>

#include "backplane/error.h"
#include "launcher/cpu_list.h"

namespace bp::launcher {
namespace {

std::string bracketed(const std::vector<int>& ids) { return "[" + join_ids(ids, ", ") + "]"; }

void check_count(const char* option, int value) {
  if (value != -1 && value < 1)
    throw_bad_value(option, std::to_string(value), "a positive integer (or -1 for \"not set\")");
}

// Consecutive slices of `n` cores, `count` of them.
std::vector<std::vector<int>> slice(const std::vector<int>& cores, int n, int count) {
  std::vector<std::vector<int>> slices;
  for (int i = 0; i < count; ++i)
    slices.emplace_back(cores.begin() + i * n, cores.begin() + (i + 1) * n);
  return slices;
}

std::vector<int> cores_from_core_list(const LaunchOptions& o, const Topology& topo) {
  std::vector<int> cores = parse_core_list(*o.core_list);
  for (int core : cores) {
    if (!topo.is_online(core))
      throw_bad_value("--core-list", "core " + std::to_string(core),
                      "an online CPU of this machine (" + format_ranges(topo.online_cpus) + ")");
    if (!topo.is_allowed(core)) {
      std::string why = topo.restrictions.empty() ? std::string()
                                                  : "; restricted by " + topo.restrictions.back();
      throw_bad_value("--core-list", "core " + std::to_string(core),
                      "a CPU this process may use (" + format_ranges(topo.allowed_ids()) + why +
                          ")");
    }
  }
  std::sort(cores.begin(), cores.end());
  return cores;
}

// --skip-cross-node-cores: in each node drop the cores that would leave an
// instance straddling two nodes (the last `count mod n` of the node).
// PyTorch uses node 0's core count for every node; we count each node, which
// is the same on a uniform machine and right when a cpuset makes nodes uneven.
std::vector<int> drop_cross_node_cores(const std::vector<int>& cores, int n,
                                       const Topology& topo, Messages& m) {
  std::map<int, std::vector<int>> by_node;
  for (int core : cores) by_node[topo.node_of(core)].push_back(core);
  std::vector<int> kept;
  int largest = 0;
  for (auto& [node, node_cores] : by_node) {
    int count = static_cast<int>(node_cores.size());
    largest = std::max(largest, count);
    int usable = count - count % n;
    if (usable < count)
      m.notes.push_back("--skip-cross-node-cores: node " + std::to_string(node) + " skips cores " +
                        format_ranges({node_cores.begin() + usable, node_cores.end()}));
    kept.insert(kept.end(), node_cores.begin(), node_cores.begin() + usable);
  }
  if (kept.empty())
    throw_bad_value("--ncores-per-instance", std::to_string(n),
                    "at most the cores of one NUMA node with --skip-cross-node-cores (the largest "
                    "node has " + std::to_string(largest) + ")");
  if (kept.size() == cores.size())
    m.notes.push_back("--skip-cross-node-cores: no cross-node cores");
  return kept;
}

void warn_if_straddling(const std::vector<int>& cpus, const Topology& topo, Messages& m) {
  std::vector<int> nodes;
  for (int cpu : cpus) nodes.push_back(topo.node_of(cpu));
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (nodes.size() > 1)
    m.warnings.push_back("Numa Aware: cores:" + bracketed(cpus) + " on different NUMA nodes:" +
                         bracketed(nodes) +
                         ". To avoid this behavior, please use --ncores-per-instance knob to make "
                         "sure number of cores is divisible by --ncores-per-instance. "
                         "Alternatively, please use --skip-cross-node-cores knob.");
}

// Spec 16.4 step 1.
std::vector<std::vector<int>> split_core_list(const LaunchOptions& o, const Topology& topo,
                                              Messages& m) {
  if (o.latency_mode || o.throughput_mode)
    m.warnings.push_back("--core-list is given: --latency-mode and --throughput-mode are ignored");
  std::vector<int> cores = cores_from_core_list(o, topo);
  int n = o.ncores_per_instance;
  if (n == -1)
    throw_runtime("--core-list",
                  "please specify the \"--ncores-per-instance\" if you have pass the --core-list "
                  "params");
  const int total = static_cast<int>(cores.size());
  if (n > total)
    throw_bad_value("--ncores-per-instance", std::to_string(n),
                    "at most the " + std::to_string(total) + " cores of --core-list");
  int count = o.ninstances;
  if (count != -1 && static_cast<long>(count) * n > total)
    throw_runtime("--ninstances", "Please make sure ninstances * ncores_per_instance <= total_cores (" +
                                      std::to_string(count) + " * " + std::to_string(n) + " > " +
                                      std::to_string(total) + " cores in --core-list)");
  if (count > 1 && count * n < total)
    m.warnings.push_back("only first " + std::to_string(count * n) + " cores will be used, but you specify " +
                         std::to_string(total) + " cores in core_list");
  if (count == -1) count = total / n;
  return slice(cores, n, count);
}

// Spec 16.4 step 2, --latency-mode and --throughput-mode.
std::vector<std::vector<int>> split_by_mode(const LaunchOptions& o, const Topology& topo,
                                            Messages& m) {
  const char* mode = o.latency_mode ? "--latency-mode" : "--throughput-mode";
  if (o.ninstances != -1 || o.ncores_per_instance != -1 || o.node_id != -1 || o.use_logical_core)
    m.warnings.push_back(std::string(mode) +
                         " is exclusive to --ninstances, --ncores-per-instance, --node-id and "
                         "--use-logical-core. They won't take effect even if they are set "
                         "explicitly.");
  if (o.latency_mode) {
    std::vector<int> cores = topo.physical_cores();
    // 4 cores per instance; with fewer than 4 cores, one instance on all of
    // them (PyTorch would plan zero instances and launch nothing).
    int n = std::min<int>(4, static_cast<int>(cores.size()));
    return slice(cores, n, static_cast<int>(cores.size()) / n);
  }
  // One instance per node, on that node's physical cores, so no instance
  // straddles nodes even when a cpuset leaves nodes uneven.
  std::vector<std::vector<int>> slices;
  for (int node : topo.cpu_nodes) slices.push_back(topo.physical_cores(node));
  return slices;
}

// Spec 16.4 step 2 without a mode.
std::vector<std::vector<int>> split_cores(const LaunchOptions& o, const Topology& topo,
                                          const std::optional<LocalRank>& local, bool rank_given,
                                          Messages& m) {
  if (o.node_id != -1 &&
      !std::binary_search(topo.cpu_nodes.begin(), topo.cpu_nodes.end(), o.node_id))
    throw_bad_value("--node-id", std::to_string(o.node_id),
                    "a node with allowed CPUs. Invalid node id: " + std::to_string(o.node_id) +
                        ". Valid node ids: " + bracketed(topo.cpu_nodes));
  std::vector<int> cores =
      o.use_logical_core ? topo.logical_cpus(o.node_id) : topo.physical_cores(o.node_id);
  const int total = static_cast<int>(cores.size());
  int count = o.ninstances, n = o.ncores_per_instance;
  if (o.skip_cross_node_cores && n == -1)
    m.warnings.push_back("--skip-cross-node-cores has no effect without --ncores-per-instance");

  if (count == -1 && n == -1) {
    // A distributed launcher's ranks share the node's cores (our addition).
    count = (local && !rank_given && local->world_size > 1) ? local->world_size : 1;
    if (count > 1)
      m.notes.push_back("splitting the cores among the " + std::to_string(count) + " local ranks of " +
                        local->source);
  }
  if (n == -1) {
    if (count > total)
      throw_runtime("--ninstances", "there are " + std::to_string(total) + " total cores but you specify " +
                                        std::to_string(count) +
                                        " ninstances; please make sure ninstances <= total_cores)");
    n = total / count;
    return slice(cores, n, count);
  }
  if (n > total)
    throw_bad_value("--ncores-per-instance", std::to_string(n),
                    "at most the " + std::to_string(total) + " cores available");
  if (o.skip_cross_node_cores) {
    if (count != -1)
      m.warnings.push_back("--skip-cross-node-cores is set: --ninstances " + std::to_string(count) +
                           " is ignored; the number of instances follows from the cores kept");
    cores = drop_cross_node_cores(cores, n, topo, m);
    return slice(cores, n, static_cast<int>(cores.size()) / n);
  }
  if (count == -1) return slice(cores, n, total / n);
  if (static_cast<long>(count) * n > total)
    throw_runtime("--ninstances", "Please make sure ninstances * ncores_per_instance <= total_cores (" +
                                      std::to_string(count) + " * " + std::to_string(n) + " > " +
                                      std::to_string(total) + " cores)");
  return slice(cores, n, count);
}

}  // namespace

CoreAssignment assign_cores(const LaunchOptions& o, const Topology& topo,
                            const std::optional<LocalRank>& local, Messages& m) {
  check_count("--ninstances", o.ninstances);
  check_count("--ncores-per-instance", o.ncores_per_instance);
  if (o.rank < -1) throw_bad_value("--rank", std::to_string(o.rank), "an instance index >= 0");
  if (o.node_id < -1) throw_bad_value("--node-id", std::to_string(o.node_id), "a node id >= 0");
  if (o.latency_mode && o.throughput_mode)
    throw_runtime("--latency-mode", "Either args.latency_mode or args.throughput_mode should be set");

  LaunchOptions opts = o;
  const bool rank_given = o.rank != -1;
  if (!opts.core_list && opts.multi_instance && opts.ninstances == -1 &&
      opts.ncores_per_instance == -1 && !opts.latency_mode && !opts.throughput_mode) {
    m.notes.push_back("--multi-instance without --ninstances or --ncores-per-instance: throughput mode");
    opts.throughput_mode = true;
  }

  CoreAssignment out;
  std::vector<std::vector<int>> slices;
  if (opts.core_list)
    slices = split_core_list(opts, topo, m);
  else if (opts.latency_mode || opts.throughput_mode)
    slices = split_by_mode(opts, topo, m);
  else
    slices = split_cores(opts, topo, local, rank_given, m);
  // Every logical CPU of every node: no KMP_AFFINITY, as in the spec.
  out.set_kmp_affinity = !(opts.use_logical_core && opts.node_id == -1 && !opts.core_list &&
                           !opts.latency_mode && !opts.throughput_mode);
  out.ninstances = static_cast<int>(slices.size());

  int rank = -1;
  if (rank_given) {
    rank = o.rank;
    out.rank_source = "--rank";
  } else if (local && local->world_size > 1) {
    rank = local->rank;
    out.rank_source = local->source;
  }
  if (rank >= out.ninstances)
    throw_bad_value(rank_given ? "--rank" : "local rank", std::to_string(rank) + " (from " + out.rank_source + ")",
                    "an instance index below the " + std::to_string(out.ninstances) +
                        " instances planned");
  for (int i = 0; i < out.ninstances; ++i) {
    if (rank != -1 && i != rank) continue;
    // Sorted within the instance, so "4-7,12-15" rather than node-by-node order.
    std::sort(slices[i].begin(), slices[i].end());
    warn_if_straddling(slices[i], topo, m);
    out.launched.push_back(i);
    out.cpus.push_back(slices[i]);
  }
  if (rank != -1) {
    out.rank = rank;
    if (out.ninstances > 1)
      m.notes.push_back("assigning " + std::to_string(slices[rank].size()) + " cores for instance " +
                        std::to_string(rank) + " (rank from " + out.rank_source + ")");
  }
  return out;
}

}  // namespace bp::launcher
