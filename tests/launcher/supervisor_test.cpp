// Real launches through run_plan, with /bin/sh as the program, so they run
// on any Linux machine (2 CPUs are enough).

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "backplane/error.h"
#include "launcher/supervisor.h"
#include "launcher_test_support.h"

namespace bp::launcher {
namespace {

using testing::FakeSysfs;
using testing::MachineShape;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A plan of one instance per shell command, on CPUs of this machine, with no
// binding unless the test sets one.
Plan shell_plan(const std::vector<std::string>& scripts, const std::string& log_dir = "") {
  Plan plan;
  plan.binding.mode = BindMode::none;
  plan.log_dir = log_dir;
  int cpu = read_topology().allowed_cpus.front().id;
  for (size_t i = 0; i < scripts.size(); ++i) {
    InstancePlan inst;
    inst.index = static_cast<int>(i);
    inst.cpus = {cpu};
    inst.memory_nodes = {0};
    inst.argv = {"/bin/sh", "-c", scripts[i]};
    inst.env = {{"BP_TEST_INSTANCE", std::to_string(i), false}};
    if (!log_dir.empty()) inst.log_file = log_dir + "/run_instance_" + std::to_string(i) + ".log";
    plan.instances.push_back(inst);
  }
  plan.ninstances = static_cast<int>(scripts.size());
  return plan;
}

const Reporter kQuiet = [](const std::string&) {};

TEST(Supervisor, AllSucceed) {
  RunResult r = run_plan(shell_plan({"exit 0", "exit 0"}), current_environment(), kQuiet);
  ASSERT_EQ(r.outcomes.size(), 2u);
  for (const auto& o : r.outcomes) EXPECT_FALSE(o.failed());
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(Supervisor, AFailingInstanceIsNamedAndGivesTheStatus) {
  std::vector<std::string> lines;
  RunResult r = run_plan(shell_plan({"exit 0", "sleep 0.2; exit 3"}), current_environment(),
                         [&](const std::string& line) { lines.push_back(line); });
  EXPECT_FALSE(r.outcomes[0].failed());
  EXPECT_TRUE(r.outcomes[1].failed());
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(r.outcomes[1].describe({1}), "instance 1 (cpus 1-1) exited with status 3");
  EXPECT_TRUE(testing::any_contains(lines, "instance 1 (cpus"));
}

TEST(Supervisor, AnInstanceKilledBySignal) {
  RunResult r = run_plan(shell_plan({"kill -KILL $$"}), current_environment(), kQuiet);
  EXPECT_TRUE(r.outcomes[0].signaled);
  EXPECT_EQ(r.outcomes[0].code, SIGKILL);
  EXPECT_EQ(r.exit_code(), 128 + SIGKILL);
  EXPECT_NE(r.outcomes[0].describe({0}).find("killed by signal 9 (SIGKILL)"), std::string::npos);
}

TEST(Supervisor, AProgramThatCannotStart) {
  Plan plan = shell_plan({"exit 0", "exit 0"});
  plan.instances[0].argv = {"/nonexistent/program"};
  RunResult r = run_plan(plan, current_environment(), kQuiet);
  EXPECT_FALSE(r.outcomes[0].started);
  EXPECT_EQ(r.outcomes[0].start_error, "execve: No such file or directory");
  EXPECT_FALSE(r.outcomes[1].failed());
  EXPECT_EQ(r.exit_code(), 127);
}

TEST(Supervisor, LogsPerInstanceAndEnvironment) {
  FakeSysfs tmp(MachineShape{});
  std::string dir = tmp.root() + "/logs/nested";
  RunResult r = run_plan(shell_plan({"echo out $BP_TEST_INSTANCE; echo err >&2", "printf 'no newline'"}, dir),
                         current_environment(), kQuiet);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(read_file(dir + "/run_instance_0.log"), "out 0\nerr\n");
  EXPECT_EQ(read_file(dir + "/run_instance_1.log"), "no newline");
}

TEST(Supervisor, UnwritableLogFolderIsAnErrorBeforeLaunch) {
  FakeSysfs tmp(MachineShape{});
  tmp.write("file", "x");
  EXPECT_THROW(run_plan(shell_plan({"exit 0"}, tmp.root() + "/file/sub"), current_environment(), kQuiet),
               bp::Error);
}

TEST(Supervisor, DirectBindingPinsCpusAndMemory) {
  Topology topo = read_topology();
  int cpu = topo.allowed_cpus.back().id;
  int node = topo.memory_nodes.front();
  FakeSysfs tmp(MachineShape{});
  Plan plan = shell_plan({"grep Cpus_allowed_list /proc/self/status; grep -c bind:" + std::to_string(node) +
                          " /proc/self/numa_maps"},
                         tmp.root());
  plan.binding.mode = BindMode::direct;
  plan.binding.binds_memory = real_host({}).mempolicy_works(node);
  plan.instances[0].cpus = {cpu};
  plan.instances[0].memory_nodes = {node};
  RunResult r = run_plan(plan, current_environment(), kQuiet);
  std::string log = read_file(plan.instances[0].log_file);
  EXPECT_NE(log.find("Cpus_allowed_list:\t" + std::to_string(cpu) + "\n"), std::string::npos) << log;
  if (plan.binding.binds_memory) {
    EXPECT_EQ(r.exit_code(), 0) << log;  // grep -c found bind:<node> mappings
  }
}

TEST(Supervisor, SigtermIsForwardedToEveryInstance) {
  // The helper thread blocks every signal, so the supervisor's thread gets them.
  std::thread sender([] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(getpid(), SIGTERM);
  });
  auto start = std::chrono::steady_clock::now();
  RunResult r = run_plan(shell_plan({"exec sleep 20", "exec sleep 20"}), current_environment(), kQuiet);
  sender.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(r.signal_received, SIGTERM);
  for (const auto& o : r.outcomes) {
    EXPECT_TRUE(o.signaled);
    EXPECT_EQ(o.code, SIGTERM);
  }
  EXPECT_EQ(r.exit_code(), 128 + SIGTERM);
}

}  // namespace
}  // namespace bp::launcher
