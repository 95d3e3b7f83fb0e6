#pragma once
// The launcher's options: those of PyTorch's torch.backends.xeon.run_cpu
// (spec section 16.2, same names and defaults) plus Backplane's additions
// (--bind, --dry-run, --json). Filled by the CLI, read by make_plan.

#include <optional>
#include <string>
#include <vector>

namespace bp::launcher {

// How each instance is pinned to its CPUs and memory nodes.
enum class BindMode {
  automatic,  // numactl if it works, else taskset, else direct (the spec's order, then ours)
  numactl,    // prefix `numactl -C <cpus> -m <nodes>`
  taskset,    // prefix `taskset -c <cpus>` (CPUs only)
  direct,     // sched_setaffinity + set_mempolicy in the child before exec
  none,       // no binding; only the environment is set
};
const char* bind_mode_name(BindMode mode);
BindMode parse_bind_mode(const std::string& text);  // throws bp::Error on an unknown name

struct LaunchOptions {
  // What to run.
  std::string program;
  std::vector<std::string> program_args;
  bool module = false;     // -m: `python -m program`
  bool no_python = false;  // exec program directly

  // Memory allocator and OpenMP runtime.
  bool enable_tcmalloc = false;
  bool enable_jemalloc = false;
  bool use_default_allocator = false;
  bool disable_iomp = false;

  // Instances and cores. -1 means "not given", as in PyTorch.
  bool multi_instance = false;
  int ncores_per_instance = -1;
  int ninstances = -1;
  bool skip_cross_node_cores = false;
  int rank = -1;
  bool latency_mode = false;
  bool throughput_mode = false;
  int node_id = -1;
  bool use_logical_core = false;
  std::optional<std::string> core_list;

  // Binding.
  bool disable_numactl = false;
  bool disable_taskset = false;
  BindMode bind = BindMode::automatic;

  // Logs: "" means the children write to the launcher's own stdout/stderr.
  std::string log_path;
  std::string log_file_prefix = "run";
};

}  // namespace bp::launcher
