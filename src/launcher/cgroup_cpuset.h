#pragma once
// The cpuset limits of this process's cgroup (v2 unified tree or v1 cpuset
// hierarchy), found through /proc/self/cgroup. A container runtime usually
// mirrors them in the affinity mask, but not always (a process may widen its
// mask only within the cpuset, and sched_setaffinity callers may have
// narrowed it), so the launcher reads both.

#include <optional>
#include <string>
#include <vector>

namespace bp::launcher {

struct CpusetLimits {
  std::optional<std::vector<int>> cpus;  // nullopt: no cpuset limit found
  std::optional<std::vector<int>> mems;
  std::string cgroup_path;               // e.g. "/kubepods/pod1", for messages
};

CpusetLimits read_cpuset_limits(const std::string& cgroup_root, const std::string& proc_self);

}  // namespace bp::launcher
