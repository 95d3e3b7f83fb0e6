#include "launcher/topology.h"

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "backplane/error.h"
#include "launcher/cgroup_cpuset.h"
#include "launcher/cpu_list.h"
#include "launcher/sysfs_read.h"

namespace bp::launcher {
namespace fs = std::filesystem;
namespace {

std::vector<int> ids_of_entries(const std::string& dir, const std::string& prefix) {
  std::vector<int> ids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string digits = name.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    ids.push_back(std::stoi(digits));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<int> online_cpus(const std::string& cpu_dir) {
  if (auto text = read_small_file(cpu_dir + "/online"))
    return parse_id_list(*text, cpu_dir + "/online");
  // Old kernels and some sandboxes lack "online": every cpuN directory counts.
  return ids_of_entries(cpu_dir, "cpu");
}

std::vector<int> affinity_mask() {
  // Grow the set until the kernel accepts its size (machines with > 1024 CPUs).
  for (int ncpus = 1024; ncpus <= (1 << 20); ncpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(ncpus);
    size_t size = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      std::vector<int> ids;
      for (int cpu = 0; cpu < ncpus; ++cpu)
        if (CPU_ISSET_S(cpu, size, set)) ids.push_back(cpu);
      CPU_FREE(set);
      return ids;
    }
    CPU_FREE(set);
    if (errno != EINVAL) break;
  }
  throw_runtime("run-cpu", "cannot read this process's CPU affinity mask");
}

std::optional<std::vector<int>> mems_allowed(const std::string& proc_self) {
  auto status = read_small_file(proc_self + "/status");
  if (!status) return std::nullopt;
  std::istringstream lines(*status);
  const std::string key = "Mems_allowed_list:";
  for (std::string line; std::getline(lines, line);)
    if (line.compare(0, key.size(), key) == 0)
      return parse_id_list(line.substr(key.size()), proc_self + "/status Mems_allowed_list");
  return std::nullopt;
}

std::vector<int> restrict_to(const std::vector<int>& ids, const std::vector<int>& allowed,
                             const std::string& what, std::vector<std::string>& restrictions) {
  auto kept = intersect_sorted(ids, allowed);
  if (kept.size() != ids.size()) restrictions.push_back(what + " " + format_ranges(allowed));
  return kept;
}

}  // namespace

bool Topology::is_online(int cpu) const {
  return std::binary_search(online_cpus.begin(), online_cpus.end(), cpu);
}

bool Topology::is_allowed(int cpu) const { return node_of(cpu) >= 0; }

int Topology::node_of(int cpu) const {
  auto it = std::lower_bound(allowed_cpus.begin(), allowed_cpus.end(), cpu,
                             [](const Cpu& c, int id) { return c.id < id; });
  return it != allowed_cpus.end() && it->id == cpu ? it->node : -1;
}

std::vector<int> Topology::allowed_ids() const {
  std::vector<int> ids;
  for (const Cpu& c : allowed_cpus) ids.push_back(c.id);
  return ids;
}

std::vector<int> Topology::logical_cpus(int node) const {
  std::vector<int> ids;
  for (int n : cpu_nodes)
    if (node == -1 || n == node)
      for (const Cpu& c : allowed_cpus)
        if (c.node == n) ids.push_back(c.id);
  return ids;
}

std::vector<int> Topology::physical_cores(int node) const {
  std::vector<int> ids;
  for (int n : cpu_nodes) {
    if (node != -1 && n != node) continue;
    std::set<std::pair<int, int>> seen;  // (package, core)
    for (const Cpu& c : allowed_cpus)
      if (c.node == n && seen.insert({c.package, c.core}).second) ids.push_back(c.id);
  }
  return ids;
}

std::string Topology::summary() const {
  std::vector<int> allowed = allowed_ids();
  std::ostringstream s;
  s << cpu_nodes.size() << " NUMA node" << (cpu_nodes.size() == 1 ? "" : "s") << ", "
    << physical_cores().size() << " physical cores, " << allowed_cpus.size()
    << " logical CPUs allowed (" << format_ranges(allowed) << " of online "
    << format_ranges(online_cpus) << ")";
  return s.str();
}

Topology read_topology(const TopologySources& sources) {
  const std::string cpu_dir = sources.sysfs_root + "/devices/system/cpu";
  const std::string node_dir = sources.sysfs_root + "/devices/system/node";
  Topology topo;
  topo.online_cpus = online_cpus(cpu_dir);
  if (topo.online_cpus.empty())
    throw_runtime("run-cpu", "cannot read the CPU list from " + cpu_dir);

  std::vector<int> allowed = topo.online_cpus;
  if (sources.use_affinity_mask)
    allowed = restrict_to(allowed, affinity_mask(), "affinity mask", topo.restrictions);
  CpusetLimits cpuset = read_cpuset_limits(sources.cgroup_root, sources.proc_self);
  if (cpuset.cpus)
    allowed = restrict_to(allowed, *cpuset.cpus, "cgroup " + cpuset.cgroup_path + " cpuset",
                          topo.restrictions);
  if (allowed.empty())
    throw_runtime("run-cpu", "no online CPU is allowed for this process (online " +
                                 format_ranges(topo.online_cpus) + "; restricted by " +
                                 (topo.restrictions.empty() ? "?" : topo.restrictions.back()) + ")");

  // NUMA nodes: node<N>/cpulist. Without a node directory (non-NUMA kernels)
  // everything is node 0.
  std::map<int, int> node_of_cpu;
  std::vector<int> nodes = ids_of_entries(node_dir, "node");
  for (int node : nodes) {
    std::string path = node_dir + "/node" + std::to_string(node) + "/cpulist";
    if (auto text = read_small_file(path))
      for (int cpu : parse_id_list(*text, path)) node_of_cpu[cpu] = node;
  }
  for (int id : allowed) {
    Cpu cpu;
    cpu.id = id;
    std::string topo_dir = cpu_dir + "/cpu" + std::to_string(id) + "/topology";
    cpu.package = read_int_file(topo_dir + "/physical_package_id").value_or(0);
    // Without topology files each CPU is its own core: nothing is known to be a sibling.
    cpu.core = read_int_file(topo_dir + "/core_id").value_or(id);
    auto it = node_of_cpu.find(id);
    cpu.node = it == node_of_cpu.end() ? 0 : it->second;
    topo.allowed_cpus.push_back(cpu);
  }
  std::set<int> cpu_nodes;
  for (const Cpu& c : topo.allowed_cpus) cpu_nodes.insert(c.node);
  topo.cpu_nodes.assign(cpu_nodes.begin(), cpu_nodes.end());

  // Memory nodes: those with memory, narrowed by the cpuset and the process's
  // Mems_allowed. A machine without node directories has node 0 only.
  std::vector<int> mems = {0};
  if (auto text = read_small_file(node_dir + "/has_memory"))
    mems = parse_id_list(*text, node_dir + "/has_memory");
  else if (!nodes.empty())
    mems = nodes;
  std::vector<std::string> ignored;
  if (cpuset.mems) mems = restrict_to(mems, *cpuset.mems, "cpuset mems", ignored);
  if (auto allowed_mems = mems_allowed(sources.proc_self))
    mems = restrict_to(mems, *allowed_mems, "Mems_allowed", ignored);
  topo.memory_nodes = mems;
  return topo;
}

}  // namespace bp::launcher
