// Every input the spec rejects (and the ones we add) is a bp::Error with a
// message naming the problem, never a crash or a silently empty plan.

#include <gtest/gtest.h>

#include <functional>

#include "backplane/error.h"
#include "launcher/plan.h"
#include "launcher_test_support.h"

namespace bp::launcher {
namespace {

using namespace bp::launcher::testing;

class PlanErrors : public ::testing::Test {
 protected:
  FakeSysfs sys{MachineShape{2, 4, 2}};
  Topology topo = sys.read();

  // The error message make_plan throws for `o` (fails the test if none).
  std::string error_of(const LaunchOptions& o, const EnvMap& env = {}, const FakeHostFacts& facts = {}) {
    try {
      make_plan(o, topo, env, fake_host(facts));
    } catch (const bp::Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
  }
  static LaunchOptions with(std::function<void(LaunchOptions&)> edit) {
    LaunchOptions o = script();
    edit(o);
    return o;
  }
};

#define EXPECT_ERROR_CONTAINS(call, text) EXPECT_NE((call).find(text), std::string::npos) << (call)

TEST_F(PlanErrors, BothModes) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.latency_mode = o.throughput_mode = true; })),
                        "Either args.latency_mode or args.throughput_mode should be set");
}

TEST_F(PlanErrors, MoreInstancesThanCores) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.ninstances = 9; })),
                        "there are 8 total cores but you specify 9 ninstances");
}

TEST_F(PlanErrors, InstancesTimesCoresOverTheCores) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.ninstances = 3, o.ncores_per_instance = 3; })),
                        "Please make sure ninstances * ncores_per_instance <= total_cores");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.ncores_per_instance = 9; })),
                        "at most the 8 cores available");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) {
                          o.core_list = "0,1,2";
                          o.ncores_per_instance = 2;
                          o.ninstances = 2;
                        })),
                        "ninstances * ncores_per_instance <= total_cores");
}

TEST_F(PlanErrors, CoreThatDoesNotExistOrIsNotAllowed) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.core_list = "1,99", o.ncores_per_instance = 1; })),
                        "got core 99");
  sys.limit_cgroup_v2("/job", "0-3", "0");
  topo = sys.read();
  std::string message = error_of(with([](auto& o) { o.core_list = "4", o.ncores_per_instance = 1; }));
  EXPECT_ERROR_CONTAINS(message, "a CPU this process may use (0-3");
  EXPECT_ERROR_CONTAINS(message, "cgroup /job cpuset");
}

TEST_F(PlanErrors, BadCoreListSyntax) {
  for (const char* bad : {"0,,1", "a", "1-", "3-1", "0,0"})
    EXPECT_ERROR_CONTAINS(error_of(with([&](auto& o) { o.core_list = bad, o.ncores_per_instance = 1; })),
                          "--core-list");
}

TEST_F(PlanErrors, CoreListNeedsNcoresPerInstance) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.core_list = "0,1"; })),
                        "please specify the \"--ncores-per-instance\"");
}

TEST_F(PlanErrors, TcmallocAndJemallocTogether) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.enable_tcmalloc = o.enable_jemalloc = true; })),
                        "Unable to enable TCMalloc and JEMalloc at the same time.");
}

TEST_F(PlanErrors, MissingProgramOrInterpreter) {
  EXPECT_ERROR_CONTAINS(error_of(script("nope.py")), "program not found: no such file 'nope.py'");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.program = "nope", o.no_python = true; })),
                        "program not found");
  EXPECT_ERROR_CONTAINS(error_of(script("")), "missing program");
  EXPECT_ERROR_CONTAINS(error_of(script(), {{"PYTHON", "/no/python"}}), "PYTHON");
  EXPECT_ERROR_CONTAINS(error_of(script("bench")),
                        "For non Python script, you should use \"--no-python\" parameter.");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.module = o.no_python = true; })),
                        "cannot be used together");
}

TEST_F(PlanErrors, InvalidNodeIdRankAndCounts) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.node_id = 2; })),
                        "Invalid node id: 2. Valid node ids: [0, 1]");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.ninstances = 2, o.rank = 2; })),
                        "an instance index below the 2 instances planned");
  EXPECT_ERROR_CONTAINS(error_of(script(), {{"LOCAL_RANK", "x"}, {"LOCAL_WORLD_SIZE", "2"}}), "LOCAL_RANK");
  EXPECT_ERROR_CONTAINS(error_of(script(), {{"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}}), "LOCAL_RANK");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.ncores_per_instance = 4; }),
                                 {{"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "4"}}),
                        "from torchrun");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.ninstances = 0; })), "a positive integer");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.ncores_per_instance = -5; })), "a positive integer");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.rank = -2; })), "--rank");
}

TEST_F(PlanErrors, SkipCrossNodeWithMoreCoresThanANode) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.ncores_per_instance = 5, o.skip_cross_node_cores = true; })),
                        "the largest node has 4");
}

TEST_F(PlanErrors, ExplicitBindingToolMissing) {
  FakeHostFacts none;
  none.numactl_installed = none.taskset_installed = false;
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.bind = BindMode::numactl; }), {}, none),
                        "numactl is not installed");
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.bind = BindMode::taskset; }), {}, none),
                        "taskset is not installed");
}

TEST_F(PlanErrors, BadLogPrefixAndBindName) {
  EXPECT_ERROR_CONTAINS(error_of(with([](auto& o) { o.log_file_prefix = "a/b"; })), "--log-file-prefix");
  EXPECT_THROW(parse_bind_mode("fast"), bp::Error);
  EXPECT_EQ(parse_bind_mode("direct"), BindMode::direct);
}

}  // namespace
}  // namespace bp::launcher
