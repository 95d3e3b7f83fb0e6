#pragma once
// Test fixtures for the launcher: a fake sysfs/cgroup/proc tree generated
// from a compact machine description (rather than thousands of committed
// files), and a fake Host whose answers (tools, libraries, files) are fixed.

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "launcher/host.h"
#include "launcher/topology.h"

namespace bp::launcher::testing {

// `nodes` × `cores_per_node` physical cores, `threads` hyper-threads each,
// numbered the way Intel servers are: first threads of every core get CPUs
// 0..N-1 (node by node), second threads N..2N-1, and so on.
struct MachineShape {
  int nodes = 1;
  int cores_per_node = 2;
  int threads = 1;
  int cpus() const { return nodes * cores_per_node * threads; }
};

class FakeSysfs {
 public:
  explicit FakeSysfs(MachineShape shape, bool with_node_dirs = true) {
    std::string tmpl = (scratch_dir() / "bp_fake_sysfs_XXXXXX").string();
    root_ = mkdtemp(tmpl.data());
    const int ncores = shape.nodes * shape.cores_per_node;
    write("sys/devices/system/cpu/online", "0-" + std::to_string(shape.cpus() - 1));
    for (int cpu = 0; cpu < shape.cpus(); ++cpu) {
      int core = cpu % ncores;  // global physical core index
      int node = core / shape.cores_per_node;
      std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      // One package per node; core_id restarts in each package, as on real servers.
      write(dir + "physical_package_id", std::to_string(node));
      write(dir + "core_id", std::to_string(core % shape.cores_per_node));
    }
    if (with_node_dirs) {
      for (int node = 0; node < shape.nodes; ++node) {
        std::string list;
        for (int t = 0; t < shape.threads; ++t) {
          int first = t * ncores + node * shape.cores_per_node;
          list += (list.empty() ? "" : ",") + std::to_string(first) + "-" +
                  std::to_string(first + shape.cores_per_node - 1);
        }
        write("sys/devices/system/node/node" + std::to_string(node) + "/cpulist", list);
      }
      write("sys/devices/system/node/has_memory", "0-" + std::to_string(shape.nodes - 1));
    }
  }
  // tmpfs when there is one: fixtures write hundreds of small files.
  static std::filesystem::path scratch_dir() {
    std::error_code ec;
    if (access("/dev/shm", W_OK) == 0 && std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm";
    return std::filesystem::temp_directory_path();
  }
  ~FakeSysfs() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  // This process in cgroup v2 `path` whose effective cpuset is `cpus` / `mems`.
  void limit_cgroup_v2(const std::string& path, const std::string& cpus, const std::string& mems) {
    write("proc/self/cgroup", "0::" + path + "\n");
    write("cgroup" + path + "/cpuset.cpus.effective", cpus);
    write("cgroup" + path + "/cpuset.mems.effective", mems);
  }
  // The same on a cgroup v1 (or hybrid) host: the cpuset hierarchy is separate.
  void limit_cgroup_v1(const std::string& path, const std::string& cpus, const std::string& mems) {
    write("proc/self/cgroup", "4:memory:/other\n3:cpuset:" + path + "\n0::/\n");
    write("cgroup/cpuset" + path + "/cpuset.effective_cpus", cpus);
    write("cgroup/cpuset" + path + "/cpuset.effective_mems", mems);
  }
  void set_mems_allowed(const std::string& mems) {
    write("proc/self/status", "Name:\ttest\nCpus_allowed_list:\t0-3\nMems_allowed_list:\t" + mems + "\n");
  }

  TopologySources sources() const {
    TopologySources s;
    s.sysfs_root = root_ + "/sys";
    s.cgroup_root = root_ + "/cgroup";
    s.proc_self = root_ + "/proc/self";
    s.use_affinity_mask = false;  // the test process's own mask says nothing about the fake machine
    return s;
  }
  Topology read() const { return read_topology(sources()); }
  const std::string& root() const { return root_; }

  void write(const std::string& relative, const std::string& text) {
    std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }

 private:
  std::string root_;
};

// A Host that answers from fixed facts.
struct FakeHostFacts {
  bool numactl_installed = true;
  bool numactl_works = true;
  bool taskset_installed = true;
  bool mempolicy_works = true;
  std::map<std::string, std::string> libraries = {
      {"tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"},
      {"jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"},
      {"iomp5", "/opt/intel/lib/libiomp5.so"},
  };
  std::set<std::string> files = {"train.py", "/usr/bin/python3", "/usr/bin/bench"};
};

inline Host fake_host(const FakeHostFacts& f = {}) {
  Host host;
  host.find_executable = [f](const std::string& name) -> std::optional<std::string> {
    if (name == "numactl" && f.numactl_installed) return "/usr/bin/numactl";
    if (name == "taskset" && f.taskset_installed) return "/usr/bin/taskset";
    if (name == "python3") return "/usr/bin/python3";
    if (name == "bench") return "/usr/bin/bench";
    if (f.files.count(name) && name.find('/') != std::string::npos) return name;
    return std::nullopt;
  };
  host.is_file = [f](const std::string& path) { return f.files.count(path) > 0; };
  host.glob_matches = [f](const std::string& pattern) { return f.files.count(pattern) > 0; };
  host.find_library = [f](const std::string& name) -> std::optional<std::string> {
    auto it = f.libraries.find(name);
    if (it == f.libraries.end()) return std::nullopt;
    return it->second;
  };
  host.numactl_works = [f](const std::string&, int, int) { return f.numactl_works; };
  host.mempolicy_works = [f](int) { return f.mempolicy_works; };
  return host;
}

}  // namespace bp::launcher::testing

#include "launcher/plan.h"
#include "launcher/cpu_list.h"

namespace bp::launcher::testing {

// One line per instance: "cpus=0-3 mem=0 cmd=<command>", the form the
// expected plans in the tests are written in.
inline std::vector<std::string> instance_lines(const Plan& plan) {
  std::vector<std::string> lines;
  for (const InstancePlan& inst : plan.instances)
    lines.push_back("cpus=" + format_ranges(inst.cpus) + " mem=" + join_ids(inst.memory_nodes) +
                    " cmd=" + shell_join(inst.argv));
  return lines;
}

// The value of `name` in the instance's environment, or "<unset>".
inline std::string env_of(const InstancePlan& inst, const std::string& name) {
  for (const EnvVar& var : inst.env)
    if (var.name == name) return var.value;
  return "<unset>";
}

inline bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  for (const std::string& t : texts)
    if (t.find(part) != std::string::npos) return true;
  return false;
}

inline LaunchOptions script(const std::string& program = "train.py") {
  LaunchOptions o;
  o.program = program;
  return o;
}

}  // namespace bp::launcher::testing
