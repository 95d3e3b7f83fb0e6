#pragma once
// The launch plan of `backplane run-cpu --dry-run --json`.

#include <nlohmann/json.hpp>

#include "launcher/plan.h"

namespace bp::cli {

// {"ninstances", "rank", "rank_source", "topology", "binding": {"mode", "tool",
//  "binds_memory", "reason"}, "log_dir", "instances": [{"index", "cpus",
//  "cpu_ranges", "memory_nodes", "command", "env", "env_kept_from_user",
//  "log_file"}], "warnings", "notes"}
nlohmann::ordered_json plan_to_json(const bp::launcher::Plan& plan);

}  // namespace bp::cli
