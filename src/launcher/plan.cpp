#include "launcher/plan.h"

#include <algorithm>

#include "backplane/error.h"
#include "launcher/cpu_list.h"
#include "launcher/program_command.h"

namespace bp::launcher {
namespace {

std::vector<int> memory_nodes_of(const std::vector<int>& cpus, const Topology& topo) {
  std::vector<int> nodes;
  for (int cpu : cpus) nodes.push_back(topo.node_of(cpu));
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  std::vector<int> usable = intersect_sorted(nodes, topo.memory_nodes);
  // A node without memory (or one the cpuset forbids) cannot be bound to;
  // then the instance may use every allowed memory node.
  return usable.empty() ? topo.memory_nodes : usable;
}

std::string log_file_name(const LaunchOptions& o, int index, const std::vector<int>& cpus) {
  return o.log_path + "/" + o.log_file_prefix + "_instance_" + std::to_string(index) + "_cores_" +
         format_ranges(cpus) + ".log";
}

}  // namespace

Plan make_plan(const LaunchOptions& o, const Topology& topo, const EnvMap& env, const Host& host) {
  if (o.log_file_prefix.empty() || o.log_file_prefix.find('/') != std::string::npos)
    throw_bad_value("--log-file-prefix", "'" + o.log_file_prefix + "'",
                    "a non-empty file name prefix without '/'");
  Messages m;
  std::vector<std::string> program = program_command(o, env, host);
  CoreAssignment cores = assign_cores(o, topo, detect_local_rank(env), m);
  std::vector<EnvVar> common = common_environment(o, env, host, cores.set_kmp_affinity, m);

  Plan plan;
  plan.topology = topo.summary();
  plan.binding = choose_binding(o, topo, host, m);
  plan.ninstances = cores.ninstances;
  plan.rank = cores.rank;
  plan.rank_source = cores.rank_source;
  plan.log_dir = o.log_path;
  bool omp_warned = false;
  for (size_t i = 0; i < cores.launched.size(); ++i) {
    InstancePlan inst;
    inst.index = cores.launched[i];
    inst.cpus = cores.cpus[i];
    inst.memory_nodes = memory_nodes_of(inst.cpus, topo);
    inst.argv = binding_prefix(plan.binding, inst.cpus, inst.memory_nodes);
    inst.argv.insert(inst.argv.end(), program.begin(), program.end());
    EnvVar omp = omp_num_threads(static_cast<int>(inst.cpus.size()), env);
    std::string ours = std::to_string(inst.cpus.size());
    if (omp.from_user && omp.value != ours && !omp_warned) {
      m.warnings.push_back(kept_value_warning("OMP_NUM_THREADS", omp.value, ours));
      omp_warned = true;
    }
    inst.env.push_back(omp);
    inst.env.insert(inst.env.end(), common.begin(), common.end());
    if (!o.log_path.empty()) inst.log_file = log_file_name(o, inst.index, inst.cpus);
    plan.instances.push_back(std::move(inst));
  }
  plan.warnings = std::move(m.warnings);
  plan.notes = std::move(m.notes);
  return plan;
}

}  // namespace bp::launcher
