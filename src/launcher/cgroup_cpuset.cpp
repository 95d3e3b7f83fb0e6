#include "launcher/cgroup_cpuset.h"

#include <sstream>

#include "launcher/cpu_list.h"
#include "launcher/sysfs_read.h"

namespace bp::launcher {
namespace {

// The first of `names` readable in `dir` or, walking up, in a parent of it
// up to `root`: a cgroup without its own cpuset files inherits its parent's.
std::optional<std::vector<int>> read_up_the_tree(const std::string& root, std::string dir,
                                                 std::initializer_list<const char*> names) {
  while (true) {
    for (const char* name : names) {
      auto text = read_small_file(root + dir + "/" + name);
      if (text && !text->empty()) return parse_id_list(*text, root + dir + "/" + name);
    }
    if (dir.empty() || dir == "/") return std::nullopt;
    auto slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? std::string() : dir.substr(0, slash);
  }
}

}  // namespace

CpusetLimits read_cpuset_limits(const std::string& cgroup_root, const std::string& proc_self) {
  CpusetLimits limits;
  auto membership = read_small_file(proc_self + "/cgroup");
  if (!membership) return limits;
  // Lines are "<id>:<controllers>:<path>". v1 names the cpuset controller;
  // v2 has the single line "0::<path>". A v1 cpuset line wins (hybrid hosts).
  std::string v1_path, v2_path;
  bool have_v1 = false, have_v2 = false;
  std::istringstream lines(*membership);
  for (std::string line; std::getline(lines, line);) {
    auto first = line.find(':');
    auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (controllers.empty() && line.compare(0, first, "0") == 0) {
      have_v2 = true;
      v2_path = path;
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');)
      if (name == "cpuset") {
        have_v1 = true;
        v1_path = path;
      }
  }
  if (have_v1) {
    std::string root = cgroup_root + "/cpuset";
    limits.cgroup_path = v1_path;
    limits.cpus = read_up_the_tree(root, v1_path, {"cpuset.effective_cpus", "cpuset.cpus"});
    limits.mems = read_up_the_tree(root, v1_path, {"cpuset.effective_mems", "cpuset.mems"});
  }
  if (have_v2 && !limits.cpus) {
    limits.cgroup_path = v2_path;
    limits.cpus = read_up_the_tree(cgroup_root, v2_path, {"cpuset.cpus.effective"});
    limits.mems = read_up_the_tree(cgroup_root, v2_path, {"cpuset.mems.effective"});
  }
  return limits;
}

}  // namespace bp::launcher
