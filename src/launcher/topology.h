#pragma once
// The CPUs and NUMA nodes the launcher may place instances on, read from the
// kernel (sysfs) rather than from another tool's text, and restricted to
// what this process is allowed to use: its affinity mask and its cgroup
// cpuset. Inside a container that limits a job to CPUs 4-7, the launcher
// therefore plans over CPUs 4-7, not over the whole host.

#include <string>
#include <vector>

namespace bp::launcher {

// Where the kernel's answers are read from. Tests point the roots at fake
// trees (tests/launcher/fake_sysfs.h); the defaults read this machine.
struct TopologySources {
  std::string sysfs_root = "/sys";            // devices/system/{cpu,node}
  std::string cgroup_root = "/sys/fs/cgroup";  // the cgroup v2 tree or the v1 hierarchies
  std::string proc_self = "/proc/self";        // "cgroup" membership, "status" Mems_allowed_list
  bool use_affinity_mask = true;               // intersect with sched_getaffinity(0)
};

struct Cpu {
  int id = 0;       // logical CPU id, as numactl -C and taskset -c take it
  int package = 0;  // physical_package_id (socket)
  int core = 0;     // core_id within its package
  int node = 0;     // NUMA node
};

struct Topology {
  std::vector<int> online_cpus;   // every online CPU of the machine, ascending
  std::vector<Cpu> allowed_cpus;  // the CPUs this process may use, ascending by id
  std::vector<int> cpu_nodes;     // nodes holding at least one allowed CPU, ascending
  std::vector<int> memory_nodes;  // nodes this process may allocate memory from, ascending
  std::vector<std::string> restrictions;  // what narrowed the online CPUs, e.g. "cgroup cpuset 0-3"

  bool is_online(int cpu) const;
  bool is_allowed(int cpu) const;
  int node_of(int cpu) const;  // of an allowed CPU; -1 otherwise
  std::vector<int> allowed_ids() const;  // ascending
  // All allowed CPUs (hyper-threads included) of `node`, or of every node
  // when node is -1; ascending, node by node.
  std::vector<int> logical_cpus(int node = -1) const;
  // One CPU per physical core: the lowest allowed hyper-thread of each
  // (package, core) pair, ascending, node by node.
  std::vector<int> physical_cores(int node = -1) const;
  // "2 NUMA nodes, 8 physical cores, 16 logical CPUs".
  std::string summary() const;
};

// Reads the topology. Throws bp::Error when sysfs cannot be read at all or
// when no online CPU is allowed.
Topology read_topology(const TopologySources& sources = {});

}  // namespace bp::launcher
