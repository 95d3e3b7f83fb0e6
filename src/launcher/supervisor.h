#pragma once
// Runs a plan: starts every instance at once, pins it (numactl/taskset via
// the command, or directly in the child), tees its output into its log file
// when --log-path is given, forwards SIGINT and SIGTERM to all instances,
// waits for all, and reports which failed.

#include <functional>
#include <string>
#include <vector>

#include "launcher/plan.h"

namespace bp::launcher {

struct InstanceOutcome {
  int index = 0;
  int pid = -1;
  bool started = false;
  bool signaled = false;  // killed by a signal (then `code` is the signal number)
  int code = 0;           // exit status, or the signal number
  std::string start_error;  // why it did not start
  bool failed() const { return !started || signaled || code != 0; }
  // "instance 1 (cpus 1-1) exited with status 3"
  std::string describe(const std::vector<int>& cpus) const;
};

struct RunResult {
  std::vector<InstanceOutcome> outcomes;  // in the plan's order
  int signal_received = 0;                // the first SIGINT/SIGTERM the launcher got, or 0
  // 0 when every instance succeeded; else the first failing instance's exit
  // status, or 128 + signal when it was killed (the shell's convention).
  int exit_code() const;
};

// Reports progress (one line each, without a newline) as instances start and end.
using Reporter = std::function<void(const std::string& line)>;

// Call it from the thread that should receive signals: any other thread of
// the process must block SIGINT, SIGTERM and SIGCHLD (the CLI has no other
// threads). Throws bp::Error when the log folder cannot be created or a log file
// opened (before any instance starts).
RunResult run_plan(const Plan& plan, const EnvMap& base_env, const Reporter& report);

}  // namespace bp::launcher
