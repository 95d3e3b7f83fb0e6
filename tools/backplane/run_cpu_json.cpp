#include "run_cpu_json.h"

#include "launcher/cpu_list.h"

namespace bp::cli {

nlohmann::ordered_json plan_to_json(const bp::launcher::Plan& plan) {
  using json = nlohmann::ordered_json;
  json instances = json::array();
  for (const auto& inst : plan.instances) {
    json env = json::object();
    json kept = json::array();
    for (const auto& var : inst.env) {
      env[var.name] = var.value;
      if (var.from_user) kept.push_back(var.name);
    }
    instances.push_back({{"index", inst.index},
                         {"cpus", inst.cpus},
                         {"cpu_ranges", bp::launcher::format_ranges(inst.cpus)},
                         {"memory_nodes", inst.memory_nodes},
                         {"command", inst.argv},
                         {"env", env},
                         {"env_kept_from_user", kept},
                         {"log_file", inst.log_file.empty() ? json(nullptr) : json(inst.log_file)}});
  }
  return {{"ninstances", plan.ninstances},
          {"rank", plan.rank ? json(*plan.rank) : json(nullptr)},
          {"rank_source", plan.rank_source},
          {"topology", plan.topology},
          {"binding",
           {{"mode", bp::launcher::bind_mode_name(plan.binding.mode)},
            {"tool", plan.binding.tool.empty() ? json(nullptr) : json(plan.binding.tool)},
            {"binds_memory", plan.binding.binds_memory},
            {"reason", plan.binding.reason}}},
          {"log_dir", plan.log_dir.empty() ? json(nullptr) : json(plan.log_dir)},
          {"instances", instances},
          {"warnings", plan.warnings},
          {"notes", plan.notes}};
}

}  // namespace bp::cli
