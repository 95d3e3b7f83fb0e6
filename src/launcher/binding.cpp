#include "launcher/binding.h"

#include "backplane/error.h"
#include "launcher/cpu_list.h"

namespace bp::launcher {
namespace {

// numactl must both exist and work: in a container whose seccomp profile
// forbids set_mempolicy it is installed but fails, which is why the spec
// probes it by running it.
std::optional<std::string> working_numactl(const Topology& topo, const Host& host,
                                           std::string& why_not) {
  auto numactl = host.find_executable("numactl");
  if (!numactl) {
    why_not = "numactl is not installed (not on PATH)";
    return std::nullopt;
  }
  if (topo.memory_nodes.empty()) {
    why_not = "no memory node is allowed for this process";
    return std::nullopt;
  }
  int cpu = topo.allowed_cpus.front().id, node = topo.memory_nodes.front();
  if (!host.numactl_works(*numactl, cpu, node)) {
    why_not = "`" + *numactl + " -C " + std::to_string(cpu) + " -m " + std::to_string(node) +
              " true` fails here";
    return std::nullopt;
  }
  return numactl;
}

BindingChoice direct(const Topology& topo, const Host& host, std::string reason) {
  BindingChoice b{BindMode::direct, "", false, std::move(reason)};
  b.binds_memory = !topo.memory_nodes.empty() && host.mempolicy_works(topo.memory_nodes.front());
  if (!b.binds_memory) b.reason += "; memory not bound (set_mempolicy is not permitted here)";
  return b;
}

}  // namespace

BindingChoice choose_binding(const LaunchOptions& o, const Topology& topo, const Host& host,
                             Messages& m) {
  std::string why_not;
  if (o.bind != BindMode::automatic && (o.disable_numactl || o.disable_taskset))
    m.warnings.push_back(std::string("--bind ") + bind_mode_name(o.bind) +
                         " is given: --disable-numactl and --disable-taskset are ignored");
  switch (o.bind) {
    case BindMode::numactl:
      if (auto numactl = working_numactl(topo, host, why_not))
        return {BindMode::numactl, *numactl, true, "--bind numactl"};
      throw_runtime("--bind", "--bind numactl: " + why_not);
    case BindMode::taskset:
      if (auto taskset = host.find_executable("taskset"))
        return {BindMode::taskset, *taskset, false, "--bind taskset (CPUs only)"};
      throw_runtime("--bind", "--bind taskset: taskset is not installed (not on PATH)");
    case BindMode::direct:
      return direct(topo, host, "--bind direct");
    case BindMode::none:
      return {BindMode::none, "", false, "--bind none: instances are not pinned"};
    case BindMode::automatic:
      break;
  }

  if (!o.disable_numactl) {
    if (auto numactl = working_numactl(topo, host, why_not))
      return {BindMode::numactl, *numactl, true, "numactl works here"};
  } else {
    why_not = "--disable-numactl";
  }
  if (!o.disable_taskset) {
    if (auto taskset = host.find_executable("taskset")) {
      if (!o.disable_numactl)
        m.warnings.push_back("Core binding with numactl is not available (" + why_not +
                             "). Using taskset instead; memory is not bound to the instance's "
                             "NUMA nodes.");
      return {BindMode::taskset, *taskset, false, "taskset (" + why_not + "); binds CPUs only"};
    }
    why_not += "; taskset is not installed";
  } else {
    why_not += "; --disable-taskset";
  }
  return direct(topo, host, "direct (" + why_not + ")");
}

std::vector<std::string> binding_prefix(const BindingChoice& b, const std::vector<int>& cpus,
                                        const std::vector<int>& memory_nodes) {
  switch (b.mode) {
    case BindMode::numactl:
      return {b.tool, "-C", format_ranges(cpus), "-m", join_ids(memory_nodes)};
    case BindMode::taskset:
      return {b.tool, "-c", format_ranges(cpus)};
    default:
      return {};
  }
}

}  // namespace bp::launcher
