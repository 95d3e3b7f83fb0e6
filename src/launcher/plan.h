#pragma once
// A launch plan: per instance its CPUs, memory nodes, command and
// environment, plus how binding is done and why. make_plan is a pure
// function of options, topology, environment and the host's answers, so
// --dry-run prints exactly what a launch would do and tests check plans
// without starting processes.
//
// To add an option: add the field to LaunchOptions (options.h), parse it in
// tools/backplane/run_cpu_command.cpp and python/backplane/backends/xeon/run_cpu.py,
// use it in the step it belongs to (core_selection, binding, environment,
// program_command), show it in describe_plan and the JSON, and test its plan.

#include <optional>
#include <string>
#include <vector>

#include "launcher/binding.h"
#include "launcher/environment.h"
#include "launcher/options.h"
#include "launcher/topology.h"

namespace bp::launcher {

struct InstancePlan {
  int index = 0;
  std::vector<int> cpus;
  std::vector<int> memory_nodes;  // the nodes of its CPUs that it may allocate from
  std::vector<std::string> argv;  // the whole command, binding prefix first
  std::vector<EnvVar> env;        // set on top of the inherited environment
  std::string log_file;           // empty: the launcher's stdout/stderr
};

struct Plan {
  std::string topology;  // Topology::summary()
  BindingChoice binding;
  int ninstances = 0;    // instances of the whole job (more than launched with a rank)
  std::optional<int> rank;
  std::string rank_source;
  std::string log_dir;   // empty: no log files
  std::vector<InstancePlan> instances;  // those launched here
  std::vector<std::string> warnings;
  std::vector<std::string> notes;
};

// Throws bp::Error for every invalid combination (see docs/run-cpu.md).
Plan make_plan(const LaunchOptions& options, const Topology& topology, const EnvMap& env,
               const Host& host);

// The plan as text, one block per instance (for --dry-run and the launch log).
std::string describe_plan(const Plan& plan);

// An argument list as a shell would need it typed ("a b" -> 'a b').
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace bp::launcher
