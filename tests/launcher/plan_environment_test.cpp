// Expected environment, binding and program command of a plan.

#include <gtest/gtest.h>

#include "launcher/plan.h"
#include "launcher_test_support.h"

namespace bp::launcher {
namespace {

using namespace bp::launcher::testing;
using Lines = std::vector<std::string>;

const std::string kTc = "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4";
const std::string kJe = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
const std::string kIomp = "/opt/intel/lib/libiomp5.so";

class OneNode : public ::testing::Test {
 protected:
  FakeSysfs sys{MachineShape{1, 2, 1}};
  Topology topo = sys.read();
  Plan plan(const LaunchOptions& o, const EnvMap& env = {}, const FakeHostFacts& facts = {}) {
    return make_plan(o, topo, env, fake_host(facts));
  }
  InstancePlan first(const LaunchOptions& o, const EnvMap& env = {}, const FakeHostFacts& facts = {}) {
    return plan(o, env, facts).instances.at(0);
  }
};

TEST_F(OneNode, DefaultPreloadsTcmallocAndIompWithoutMallocConf) {
  InstancePlan i = first(script());
  EXPECT_EQ(env_of(i, "LD_PRELOAD"), kIomp + ":" + kTc);
  EXPECT_EQ(env_of(i, "MALLOC_CONF"), "<unset>");
  EXPECT_EQ(env_of(i, "OMP_NUM_THREADS"), "2");
  EXPECT_EQ(env_of(i, "KMP_AFFINITY"), "granularity=fine,compact,1,0");
  EXPECT_EQ(env_of(i, "KMP_BLOCKTIME"), "1");
}

TEST_F(OneNode, EnableJemallocSetsMallocConf) {
  LaunchOptions o = script();
  o.enable_jemalloc = true;
  InstancePlan i = first(o);
  EXPECT_EQ(env_of(i, "LD_PRELOAD"), kIomp + ":" + kJe);
  EXPECT_EQ(env_of(i, "MALLOC_CONF"), "oversize_threshold:1,background_thread:true,metadata_thp:auto");
}

TEST_F(OneNode, EnableTcmalloc) {
  LaunchOptions o = script();
  o.enable_tcmalloc = true;
  o.disable_iomp = true;
  InstancePlan i = first(o);
  EXPECT_EQ(env_of(i, "LD_PRELOAD"), kTc);
  EXPECT_EQ(env_of(i, "KMP_BLOCKTIME"), "<unset>");
}

TEST_F(OneNode, AutomaticAllocatorFallsBackToJemallocWithoutMallocConf) {
  FakeHostFacts facts;
  facts.libraries.erase("tcmalloc");
  InstancePlan i = first(script(), {}, facts);
  EXPECT_EQ(env_of(i, "LD_PRELOAD"), kIomp + ":" + kJe);
  EXPECT_EQ(env_of(i, "MALLOC_CONF"), "<unset>");
}

TEST_F(OneNode, MissingLibrariesAreWarningsNotErrors) {
  FakeHostFacts facts;
  facts.libraries.clear();
  Plan p = plan(script(), {}, facts);
  EXPECT_TRUE(any_contains(p.warnings, "Neither TCMalloc nor JeMalloc is found"));
  EXPECT_TRUE(any_contains(p.warnings, "Unable to find the libiomp5.so library"));
  EXPECT_EQ(env_of(p.instances[0], "LD_PRELOAD"), "<unset>");
  EXPECT_EQ(env_of(p.instances[0], "KMP_AFFINITY"), "<unset>");
  LaunchOptions o = script();
  o.enable_jemalloc = true;
  EXPECT_TRUE(any_contains(plan(o, {}, facts).warnings, "apt install libjemalloc2"));
}

TEST_F(OneNode, DefaultAllocatorAndNoIompSetOnlyOmpNumThreads) {
  LaunchOptions o = script();
  o.use_default_allocator = true;
  o.disable_iomp = true;
  Plan p = plan(o);
  ASSERT_EQ(p.instances[0].env.size(), 1u);
  EXPECT_EQ(p.instances[0].env[0].name, "OMP_NUM_THREADS");
  EXPECT_TRUE(p.warnings.empty());
}

TEST_F(OneNode, UserVariablesAreNeverOverridden) {
  LaunchOptions o = script();
  o.enable_jemalloc = true;
  Plan p = plan(o, {{"OMP_NUM_THREADS", "7"}, {"KMP_BLOCKTIME", "1"}, {"MALLOC_CONF", "narenas:1"}});
  InstancePlan i = p.instances[0];
  EXPECT_EQ(env_of(i, "OMP_NUM_THREADS"), "7");
  EXPECT_EQ(env_of(i, "MALLOC_CONF"), "narenas:1");
  EXPECT_TRUE(any_contains(p.warnings,
                           "Overriding value with the one set in environment variable: OMP_NUM_THREADS. "
                           "Value applied: 7. Value ignored: 2"));
  EXPECT_TRUE(any_contains(p.warnings, "MALLOC_CONF. Value applied: narenas:1"));
  EXPECT_FALSE(any_contains(p.warnings, "KMP_BLOCKTIME"));  // same value: nothing to say
  for (const EnvVar& var : i.env)
    EXPECT_EQ(var.from_user, var.name != "LD_PRELOAD" && var.name != "KMP_AFFINITY") << var.name;
}

TEST_F(OneNode, StaleLdPreloadEntriesAreRemoved) {
  FakeHostFacts facts;
  facts.files.insert("/usr/lib/libfoo.so");
  Plan p = plan(script(), {{"LD_PRELOAD", "/gone/libbar.so:/usr/lib/libfoo.so"}}, facts);
  EXPECT_EQ(env_of(p.instances[0], "LD_PRELOAD"), kIomp + ":" + kTc + ":/usr/lib/libfoo.so");
  EXPECT_TRUE(any_contains(p.warnings, "/gone/libbar.so doesn't exist. Removing it from LD_PRELOAD."));
}

TEST_F(OneNode, ALibraryAlreadyPreloadedIsNotAddedAgain) {
  FakeHostFacts facts;
  facts.files.insert("/other/libtcmalloc.so.4");
  Plan p = plan(script(), {{"LD_PRELOAD", "/other/libtcmalloc.so.4"}}, facts);
  EXPECT_EQ(env_of(p.instances[0], "LD_PRELOAD"), kIomp + ":/other/libtcmalloc.so.4");
}

TEST_F(OneNode, NumactlMissingFallsBackToTasksetWithAWarning) {
  FakeHostFacts facts;
  facts.numactl_installed = false;
  Plan p = plan(script(), {}, facts);
  EXPECT_EQ(p.binding.mode, BindMode::taskset);
  EXPECT_FALSE(p.binding.binds_memory);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-1 mem=0 cmd=/usr/bin/taskset -c 0-1 /usr/bin/python3 -u train.py"}));
  EXPECT_TRUE(any_contains(p.warnings, "numactl is not installed"));
}

TEST_F(OneNode, NumactlThatFailsFallsBackToTaskset) {
  FakeHostFacts facts;
  facts.numactl_works = false;
  Plan p = plan(script(), {}, facts);
  EXPECT_EQ(p.binding.mode, BindMode::taskset);
  EXPECT_TRUE(any_contains(p.warnings, "fails here"));
}

TEST_F(OneNode, DisableNumactlUsesTasksetQuietly) {
  LaunchOptions o = script();
  o.disable_numactl = true;
  Plan p = plan(o);
  EXPECT_EQ(p.binding.mode, BindMode::taskset);
  EXPECT_TRUE(p.warnings.empty());
}

TEST_F(OneNode, NeitherToolOrBothDisabledBindsDirectly) {
  LaunchOptions o = script();
  o.disable_numactl = o.disable_taskset = true;
  Plan p = plan(o);
  EXPECT_EQ(p.binding.mode, BindMode::direct);
  EXPECT_TRUE(p.binding.binds_memory);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-1 mem=0 cmd=/usr/bin/python3 -u train.py"}));

  FakeHostFacts none;
  none.numactl_installed = none.taskset_installed = false;
  none.mempolicy_works = false;
  Plan q = plan(script(), {}, none);
  EXPECT_EQ(q.binding.mode, BindMode::direct);
  EXPECT_FALSE(q.binding.binds_memory);
  EXPECT_NE(q.binding.reason.find("memory not bound"), std::string::npos);
}

TEST_F(OneNode, ExplicitBindModes) {
  LaunchOptions o = script();
  o.bind = BindMode::none;
  EXPECT_EQ(instance_lines(plan(o)), (Lines{"cpus=0-1 mem=0 cmd=/usr/bin/python3 -u train.py"}));
  o.bind = BindMode::taskset;
  EXPECT_EQ(plan(o).binding.mode, BindMode::taskset);
  o.bind = BindMode::direct;
  o.disable_numactl = true;
  Plan p = plan(o);
  EXPECT_EQ(p.binding.mode, BindMode::direct);
  EXPECT_TRUE(any_contains(p.warnings, "--disable-numactl and --disable-taskset are ignored"));
  o.bind = BindMode::numactl;
  EXPECT_EQ(plan(o).binding.mode, BindMode::numactl);
}

TEST_F(OneNode, ProgramForms) {
  LaunchOptions m;
  m.program = "pkg.mod";
  m.module = true;
  m.program_args = {"--x", "a b"};
  EXPECT_EQ(shell_join(first(m).argv), "/usr/bin/numactl -C 0-1 -m 0 /usr/bin/python3 -u -m pkg.mod --x 'a b'");

  LaunchOptions direct;
  direct.program = "bench";
  direct.no_python = true;
  EXPECT_EQ(shell_join(first(direct).argv), "/usr/bin/numactl -C 0-1 -m 0 /usr/bin/bench");

  FakeHostFacts facts;
  facts.files.insert("/opt/py/bin/python");
  EXPECT_EQ(first(script(), {{"PYTHON", "/opt/py/bin/python"}}, facts).argv[5], "/opt/py/bin/python");
}

TEST_F(OneNode, LogFilesPerInstance) {
  LaunchOptions o = script();
  o.ninstances = 2;
  o.log_path = "/tmp/logs";
  o.log_file_prefix = "bench";
  Plan p = plan(o);
  EXPECT_EQ(p.instances[0].log_file, "/tmp/logs/bench_instance_0_cores_0-0.log");
  EXPECT_EQ(p.instances[1].log_file, "/tmp/logs/bench_instance_1_cores_1-1.log");
  EXPECT_EQ(plan(script()).instances[0].log_file, "");
}

TEST_F(OneNode, DescribePlanShowsEveryInstance) {
  LaunchOptions o = script();
  o.ninstances = 2;
  o.use_default_allocator = true;
  o.disable_iomp = true;
  EXPECT_EQ(describe_plan(plan(o, {{"OMP_NUM_THREADS", "1"}})),
            "plan: 2 instances\n"
            "  topology: 1 NUMA node, 2 physical cores, 2 logical CPUs allowed (0-1 of online 0-1)\n"
            "  binding: numactl — numactl works here\n"
            "  logs: inherited stdout/stderr\n"
            "instance 0:\n"
            "  cpus: 0-0 (1)\n"
            "  memory nodes: 0\n"
            "  env: OMP_NUM_THREADS=1 (kept from environment)\n"
            "  command: /usr/bin/numactl -C 0-0 -m 0 /usr/bin/python3 -u train.py\n"
            "instance 1:\n"
            "  cpus: 1-1 (1)\n"
            "  memory nodes: 0\n"
            "  env: OMP_NUM_THREADS=1 (kept from environment)\n"
            "  command: /usr/bin/numactl -C 1-1 -m 0 /usr/bin/python3 -u train.py\n");
}

}  // namespace
}  // namespace bp::launcher
