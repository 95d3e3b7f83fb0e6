// backplane run-cpu: the CPU launcher (PyTorch's torch.backends.xeon.run_cpu,
// spec section 16). This file only parses the command line into
// LaunchOptions; the work is in src/launcher (plan.h is the entry point).
//
//   backplane run-cpu [options] program [program args...]
//
// Everything from the program name on is passed through untouched: the
// program and its arguments fill one positional list, and positionals_at_end
// makes CLI11 stop reading options at the first positional, so the
// program's own options (even -m or --help) never reach CLI11.

#include <charconv>
#include <cstdio>
#include <memory>

#include "backplane/error.h"
#include "commands.h"
#include "launcher/host.h"
#include "launcher/plan.h"
#include "launcher/supervisor.h"
#include "launcher/topology.h"
#include "run_cpu_json.h"

namespace bp::cli {
namespace {

using bp::launcher::LaunchOptions;

// Integer options are read as text and converted here, so a bad value is a
// bp::Error (exit status 2 with our message) like every other bad input.
struct RunCpuArgs {
  LaunchOptions options;
  std::string ncores_per_instance = "-1", ninstances = "-1", rank = "-1", node_id = "-1";
  std::string core_list, bind = "auto";
  std::vector<std::string> command;  // program and its arguments
  bool dry_run = false, json = false;
};

int parse_int(const char* option, const std::string& text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    bp::throw_bad_value(option, "'" + text + "'", "an integer");
  return value;
}

void say(const char* kind, const std::string& message) {
  std::fprintf(stderr, "backplane run-cpu: %s%s\n", kind, message.c_str());
}

LaunchOptions to_options(RunCpuArgs& args, const CLI::App& sub) {
  LaunchOptions o = args.options;
  o.ncores_per_instance = parse_int("--ncores-per-instance", args.ncores_per_instance);
  o.ninstances = parse_int("--ninstances", args.ninstances);
  o.rank = parse_int("--rank", args.rank);
  o.node_id = parse_int("--node-id", args.node_id);
  if (sub.count("--core-list")) o.core_list = args.core_list;
  o.bind = bp::launcher::parse_bind_mode(args.bind);
  if (args.json && !args.dry_run) bp::throw_runtime("--json", "--json describes a plan: use it with --dry-run");

  // Unknown options before the program are left over (prefix_command lets
  // them through so that the message is ours); "--" may be too.
  for (const std::string& extra : sub.remaining())
    if (extra != "--")
      bp::throw_runtime("run-cpu", "unknown option '" + extra +
                                       "' (see backplane run-cpu --help; put `--` before a "
                                       "program whose name starts with '-')");
  if (!args.command.empty()) {
    o.program = args.command.front();
    o.program_args.assign(args.command.begin() + 1, args.command.end());
  }
  return o;
}

int run(RunCpuArgs& args, const CLI::App& sub) {
  LaunchOptions options = to_options(args, sub);
  bp::launcher::EnvMap env = bp::launcher::current_environment();
  bp::launcher::Topology topology = bp::launcher::read_topology();
  bp::launcher::Plan plan =
      bp::launcher::make_plan(options, topology, env, bp::launcher::real_host(env));
  for (const std::string& warning : plan.warnings) say("warning: ", warning);
  if (args.dry_run) {
    std::string text = args.json ? plan_to_json(plan).dump(2) + "\n" : bp::launcher::describe_plan(plan);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  say("", std::string("binding: ") + bp::launcher::bind_mode_name(plan.binding.mode) + " (" +
              plan.binding.reason + ")");
  for (const auto& inst : plan.instances)
    say("", "instance " + std::to_string(inst.index) + ": " + bp::launcher::shell_join(inst.argv));
  std::fflush(stdout);
  bp::launcher::RunResult result =
      bp::launcher::run_plan(plan, env, [](const std::string& line) { say("", line); });
  std::vector<std::string> failures;
  for (size_t i = 0; i < result.outcomes.size(); ++i)
    if (result.outcomes[i].failed())
      failures.push_back(result.outcomes[i].describe(plan.instances[i].cpus));
  if (result.signal_received)
    say("", "interrupted by signal " + std::to_string(result.signal_received) +
                ", which was passed on to the instances");
  if (!failures.empty()) {
    say("error: ", std::to_string(failures.size()) + " of " + std::to_string(result.outcomes.size()) +
                       " instances failed:");
    for (const std::string& f : failures) say("error:   ", f);
  }
  return result.exit_code();
}

}  // namespace

void add_run_cpu_command(CLI::App& app) {
  auto args = std::make_shared<RunCpuArgs>();
  LaunchOptions& o = args->options;
  CLI::App* sub = app.add_subcommand(
      "run-cpu",
      "Launch a program pinned to CPU cores and NUMA nodes, one or more instances "
      "(PyTorch's torch.backends.xeon.run_cpu). Usage: backplane run-cpu [options] program [args...]");
  sub->prefix_command();
  sub->positionals_at_end();
  sub->add_option("program", args->command, "The program to run, then its arguments");

  sub->add_flag("--multi-instance,--multi_instance", o.multi_instance,
                "Several instances; without --ninstances or --ncores-per-instance, one per NUMA node");
  sub->add_flag("-m,--module", o.module, "Run the program as `python -m program`");
  sub->add_flag("--no-python,--no_python", o.no_python, "Run the program directly, not with Python");

  sub->add_flag("--enable-tcmalloc,--enable_tcmalloc", o.enable_tcmalloc, "Preload tcmalloc")
      ->group("Memory allocator");
  sub->add_flag("--enable-jemalloc,--enable_jemalloc", o.enable_jemalloc,
                "Preload jemalloc and set MALLOC_CONF")->group("Memory allocator");
  sub->add_flag("--use-default-allocator,--use_default_allocator", o.use_default_allocator,
                "Preload no allocator")->group("Memory allocator");
  sub->add_flag("--disable-iomp,--disable_iomp", o.disable_iomp,
                "Do not preload Intel OpenMP (libiomp5.so)")->group("OpenMP");

  const char* mi = "Instances and cores";
  sub->add_option("--ncores-per-instance,--ncores_per_instance", args->ncores_per_instance,
                  "Cores per instance (-1: derived)")->group(mi);
  sub->add_option("--ninstances", args->ninstances, "Number of instances (-1: derived)")->group(mi);
  sub->add_flag("--skip-cross-node-cores,--skip_cross_node_cores", o.skip_cross_node_cores,
                "With --ncores-per-instance, skip cores that would make an instance straddle NUMA nodes")
      ->group(mi);
  sub->add_option("--rank", args->rank,
                  "Launch only instance #rank (-1: all; default from LOCAL_RANK, "
                  "OMPI_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID)")->group(mi);
  sub->add_flag("--latency-mode,--latency_mode", o.latency_mode,
                "4 cores per instance over all physical cores")->group(mi);
  sub->add_flag("--throughput-mode,--throughput_mode", o.throughput_mode,
                "One instance per NUMA node over all physical cores")->group(mi);
  sub->add_option("--node-id,--node_id", args->node_id, "Use only this NUMA node's cores (-1: all)")
      ->group(mi);
  sub->add_flag("--use-logical-core,--use_logical_core", o.use_logical_core,
                "Use hyper-threads too, not only one CPU per physical core")->group(mi);
  sub->add_option("--core-list,--core_list", args->core_list,
                  "Explicit cores, e.g. \"0,1,2,3\" or \"0-3\" (needs --ncores-per-instance)")->group(mi);

  const char* bind = "Binding";
  sub->add_flag("--disable-numactl,--disable_numactl", o.disable_numactl, "Do not bind with numactl")
      ->group(bind);
  sub->add_flag("--disable-taskset,--disable_taskset", o.disable_taskset, "Do not bind with taskset")
      ->group(bind);
  sub->add_option("--bind", args->bind,
                  "auto (numactl, else taskset, else direct), numactl, taskset, direct or none")
      ->group(bind);

  const char* out = "Logs and plan";
  sub->add_option("--log-path,--log_path", o.log_path,
                  "Folder for one log file per instance (\"\": output goes to the console only)")
      ->group(out);
  sub->add_option("--log-file-prefix,--log_file_prefix", o.log_file_prefix, "Log file name prefix")
      ->group(out);
  sub->add_flag("--dry-run,--dry_run", args->dry_run, "Print the plan and launch nothing")->group(out);
  sub->add_flag("--json", args->json, "With --dry-run: the plan as JSON")->group(out);

  sub->callback([args, sub] {
    int code = 0;
    try {
      code = run(*args, *sub);
    } catch (const bp::Error& e) {
      say("error: ", e.what());
      code = 2;
    }
    // CLI11 turns RuntimeError into the exit status without printing anything.
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace bp::cli
