// Expected plans for the core-selection options of spec section 16 on the
// fixture machines, including the spec's own test ideas.

#include <gtest/gtest.h>

#include "launcher/plan.h"
#include "launcher_test_support.h"

namespace bp::launcher {
namespace {

using namespace bp::launcher::testing;
using Lines = std::vector<std::string>;

const std::string kPy = " /usr/bin/python3 -u train.py";

class TwoNodesHT : public ::testing::Test {
 protected:
  FakeSysfs sys{MachineShape{2, 4, 2}};
  Topology topo = sys.read();
  Plan plan(const LaunchOptions& o, const EnvMap& env = {}) { return make_plan(o, topo, env, fake_host()); }
};

TEST_F(TwoNodesHT, SpecIdeaSkipCrossNodeCores) {
  LaunchOptions o = script();
  o.ncores_per_instance = 3;
  o.skip_cross_node_cores = true;
  Plan p = plan(o);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-2 mem=0 cmd=/usr/bin/numactl -C 0-2 -m 0" + kPy,
                                      "cpus=4-6 mem=1 cmd=/usr/bin/numactl -C 4-6 -m 1" + kPy}));
  EXPECT_TRUE(any_contains(p.notes, "node 0 skips cores 3-3"));
  EXPECT_TRUE(p.warnings.empty());
}

TEST_F(TwoNodesHT, SpecIdeaThroughputMode) {
  LaunchOptions o = script();
  o.throughput_mode = true;
  Plan p = plan(o);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-3 mem=0 cmd=/usr/bin/numactl -C 0-3 -m 0" + kPy,
                                      "cpus=4-7 mem=1 cmd=/usr/bin/numactl -C 4-7 -m 1" + kPy}));
  for (const auto& inst : p.instances) EXPECT_EQ(env_of(inst, "OMP_NUM_THREADS"), "4");
}

TEST_F(TwoNodesHT, MultiInstanceAloneMeansThroughputMode) {
  LaunchOptions o = script();
  o.multi_instance = true;
  EXPECT_EQ(instance_lines(plan(o)).size(), 2u);
  EXPECT_EQ(plan(o).instances[1].cpus, (std::vector<int>{4, 5, 6, 7}));
}

TEST_F(TwoNodesHT, DefaultIsOneInstanceOnAllPhysicalCores) {
  Plan p = plan(script());
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-7 mem=0,1 cmd=/usr/bin/numactl -C 0-7 -m 0,1" + kPy}));
  EXPECT_EQ(env_of(p.instances[0], "OMP_NUM_THREADS"), "8");
  EXPECT_TRUE(any_contains(p.warnings, "Numa Aware: cores:[0, 1, 2, 3, 4, 5, 6, 7] on different NUMA nodes:[0, 1]"));
}

TEST_F(TwoNodesHT, NcoresWithoutSkipStraddlesAndWarns) {
  LaunchOptions o = script();
  o.ncores_per_instance = 3;
  Plan p = plan(o);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-2 mem=0 cmd=/usr/bin/numactl -C 0-2 -m 0" + kPy,
                                      "cpus=3-5 mem=0,1 cmd=/usr/bin/numactl -C 3-5 -m 0,1" + kPy}));
  EXPECT_TRUE(any_contains(p.warnings, "Numa Aware: cores:[3, 4, 5]"));
}

TEST_F(TwoNodesHT, NinstancesOnly) {
  LaunchOptions o = script();
  o.ninstances = 4;
  Plan p = plan(o);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-1 mem=0 cmd=/usr/bin/numactl -C 0-1 -m 0" + kPy,
                                      "cpus=2-3 mem=0 cmd=/usr/bin/numactl -C 2-3 -m 0" + kPy,
                                      "cpus=4-5 mem=1 cmd=/usr/bin/numactl -C 4-5 -m 1" + kPy,
                                      "cpus=6-7 mem=1 cmd=/usr/bin/numactl -C 6-7 -m 1" + kPy}));
  EXPECT_EQ(env_of(p.instances[3], "OMP_NUM_THREADS"), "2");
}

TEST_F(TwoNodesHT, NinstancesAndNcores) {
  LaunchOptions o = script();
  o.ninstances = 2;
  o.ncores_per_instance = 2;
  EXPECT_EQ(instance_lines(plan(o)), (Lines{"cpus=0-1 mem=0 cmd=/usr/bin/numactl -C 0-1 -m 0" + kPy,
                                            "cpus=2-3 mem=0 cmd=/usr/bin/numactl -C 2-3 -m 0" + kPy}));
}

TEST_F(TwoNodesHT, SkipCrossNodeIgnoresNinstancesWithAWarning) {
  LaunchOptions o = script();
  o.ninstances = 1;
  o.ncores_per_instance = 2;
  o.skip_cross_node_cores = true;
  Plan p = plan(o);
  EXPECT_EQ(p.instances.size(), 4u);
  EXPECT_TRUE(any_contains(p.notes, "no cross-node cores"));
  EXPECT_TRUE(any_contains(p.warnings, "--ninstances 1 is ignored"));
}

TEST_F(TwoNodesHT, NodeId) {
  LaunchOptions o = script();
  o.node_id = 1;
  EXPECT_EQ(instance_lines(plan(o)), (Lines{"cpus=4-7 mem=1 cmd=/usr/bin/numactl -C 4-7 -m 1" + kPy}));
}

TEST_F(TwoNodesHT, NodeIdWithLogicalCores) {
  LaunchOptions o = script();
  o.node_id = 1;
  o.use_logical_core = true;
  Plan p = plan(o);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=4-7,12-15 mem=1 cmd=/usr/bin/numactl -C 4-7,12-15 -m 1" + kPy}));
  EXPECT_EQ(env_of(p.instances[0], "KMP_AFFINITY"), "granularity=fine,compact,1,0");
}

TEST_F(TwoNodesHT, AllLogicalCoresOfAllNodesDropKmpAffinity) {
  LaunchOptions o = script();
  o.use_logical_core = true;
  o.ninstances = 2;
  Plan p = plan(o);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-3,8-11 mem=0 cmd=/usr/bin/numactl -C 0-3,8-11 -m 0" + kPy,
                                      "cpus=4-7,12-15 mem=1 cmd=/usr/bin/numactl -C 4-7,12-15 -m 1" + kPy}));
  EXPECT_EQ(env_of(p.instances[0], "KMP_AFFINITY"), "<unset>");
  EXPECT_EQ(env_of(p.instances[0], "KMP_BLOCKTIME"), "1");
}

TEST_F(TwoNodesHT, CoreList) {
  LaunchOptions o = script();
  o.core_list = "7,1,3,5";
  o.ncores_per_instance = 2;
  EXPECT_EQ(instance_lines(plan(o)),
            (Lines{"cpus=1-1,3-3 mem=0 cmd=/usr/bin/numactl -C 1-1,3-3 -m 0" + kPy,
                   "cpus=5-5,7-7 mem=1 cmd=/usr/bin/numactl -C 5-5,7-7 -m 1" + kPy}));
}

TEST_F(TwoNodesHT, CoreListUsesOnlyTheFirstCoresWhenAsked) {
  LaunchOptions o = script();
  o.core_list = "0-5";
  o.ncores_per_instance = 1;
  o.ninstances = 2;
  Plan p = plan(o);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-0 mem=0 cmd=/usr/bin/numactl -C 0-0 -m 0" + kPy,
                                      "cpus=1-1 mem=0 cmd=/usr/bin/numactl -C 1-1 -m 0" + kPy}));
  EXPECT_TRUE(any_contains(p.warnings, "only first 2 cores will be used, but you specify 6 cores in core_list"));
}

TEST_F(TwoNodesHT, CoreListMayNameHyperThreads) {
  LaunchOptions o = script();
  o.core_list = "0,8";
  o.ncores_per_instance = 2;
  EXPECT_EQ(instance_lines(plan(o)), (Lines{"cpus=0-0,8-8 mem=0 cmd=/usr/bin/numactl -C 0-0,8-8 -m 0" + kPy}));
}

TEST_F(TwoNodesHT, RankLaunchesOnlyItsSlice) {
  LaunchOptions o = script();
  o.ninstances = 2;
  o.rank = 1;
  Plan p = plan(o);
  EXPECT_EQ(p.ninstances, 2);
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=4-7 mem=1 cmd=/usr/bin/numactl -C 4-7 -m 1" + kPy}));
  EXPECT_EQ(p.instances[0].index, 1);
  EXPECT_TRUE(any_contains(p.notes, "assigning 4 cores for instance 1"));
}

TEST_F(TwoNodesHT, TorchrunLocalRankTakesItsSlice) {
  Plan p = plan(script(), {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}});
  EXPECT_EQ(p.ninstances, 2);
  EXPECT_EQ(p.rank_source, "torchrun (LOCAL_RANK=1, LOCAL_WORLD_SIZE=2)");
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=4-7 mem=1 cmd=/usr/bin/numactl -C 4-7 -m 1" + kPy}));
}

TEST_F(TwoNodesHT, OpenMpiAndSlurmLocalRanks) {
  Plan mpi = plan(script(), {{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(instance_lines(mpi), (Lines{"cpus=6-7 mem=1 cmd=/usr/bin/numactl -C 6-7 -m 1" + kPy}));
  Plan slurm = plan(script(), {{"SLURM_LOCALID", "0"}, {"SLURM_NTASKS_PER_NODE", "2(x3)"}});
  EXPECT_EQ(instance_lines(slurm), (Lines{"cpus=0-3 mem=0 cmd=/usr/bin/numactl -C 0-3 -m 0" + kPy}));
}

TEST_F(TwoNodesHT, LocalRankWithNcoresPicksFromTheSlices) {
  LaunchOptions o = script();
  o.ncores_per_instance = 1;
  Plan p = plan(o, {{"LOCAL_RANK", "5"}, {"LOCAL_WORLD_SIZE", "8"}});
  EXPECT_EQ(p.ninstances, 8);
  EXPECT_EQ(p.instances[0].cpus, (std::vector<int>{5}));
}

TEST_F(TwoNodesHT, ExplicitOptionsWinOverTheLocalRank) {
  LaunchOptions o = script();
  o.rank = 0;
  o.ninstances = 2;
  Plan p = plan(o, {{"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}});
  EXPECT_EQ(p.rank_source, "--rank");
  EXPECT_EQ(p.instances[0].cpus, (std::vector<int>{0, 1, 2, 3}));
  // A single-rank job is no job split at all.
  EXPECT_EQ(plan(script(), {{"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "1"}}).instances[0].cpus.size(), 8u);
}

TEST(PlanCores, LatencyModeOnFourNodesOf28Cores) {
  FakeSysfs sys(MachineShape{4, 28, 2});
  LaunchOptions o = script();
  o.latency_mode = true;
  o.ninstances = 3;  // overridden, with a warning
  Plan p = make_plan(o, sys.read(), {}, fake_host());
  ASSERT_EQ(p.instances.size(), 28u);
  EXPECT_EQ(instance_lines(p)[0], "cpus=0-3 mem=0 cmd=/usr/bin/numactl -C 0-3 -m 0" + kPy);
  EXPECT_EQ(instance_lines(p)[7], "cpus=28-31 mem=1 cmd=/usr/bin/numactl -C 28-31 -m 1" + kPy);
  EXPECT_EQ(instance_lines(p)[27], "cpus=108-111 mem=3 cmd=/usr/bin/numactl -C 108-111 -m 3" + kPy);
  EXPECT_EQ(env_of(p.instances[0], "OMP_NUM_THREADS"), "4");
  EXPECT_TRUE(any_contains(p.warnings, "--latency-mode is exclusive to"));
}

TEST(PlanCores, ThroughputModeOnFourNodesOf28Cores) {
  FakeSysfs sys(MachineShape{4, 28, 2});
  LaunchOptions o = script();
  o.throughput_mode = true;
  Plan p = make_plan(o, sys.read(), {}, fake_host());
  EXPECT_EQ(instance_lines(p), (Lines{"cpus=0-27 mem=0 cmd=/usr/bin/numactl -C 0-27 -m 0" + kPy,
                                      "cpus=28-55 mem=1 cmd=/usr/bin/numactl -C 28-55 -m 1" + kPy,
                                      "cpus=56-83 mem=2 cmd=/usr/bin/numactl -C 56-83 -m 2" + kPy,
                                      "cpus=84-111 mem=3 cmd=/usr/bin/numactl -C 84-111 -m 3" + kPy}));
}

TEST(PlanCores, SkipCrossNodeOnFourNodesOf28Cores) {
  FakeSysfs sys(MachineShape{4, 28, 2});
  LaunchOptions o = script();
  o.ncores_per_instance = 8;  // 28 = 3*8 + 4: the last 4 cores of each node are skipped
  o.skip_cross_node_cores = true;
  Plan p = make_plan(o, sys.read(), {}, fake_host());
  ASSERT_EQ(p.instances.size(), 12u);
  EXPECT_EQ(instance_lines(p)[2], "cpus=16-23 mem=0 cmd=/usr/bin/numactl -C 16-23 -m 0" + kPy);
  EXPECT_EQ(instance_lines(p)[3], "cpus=28-35 mem=1 cmd=/usr/bin/numactl -C 28-35 -m 1" + kPy);
  EXPECT_TRUE(p.warnings.empty());
}

TEST(PlanCores, LatencyModeWithFewerThanFourCoresRunsOneInstance) {
  FakeSysfs sys(MachineShape{1, 2, 1});
  LaunchOptions o = script();
  o.latency_mode = true;
  EXPECT_EQ(instance_lines(make_plan(o, sys.read(), {}, fake_host())),
            (Lines{"cpus=0-1 mem=0 cmd=/usr/bin/numactl -C 0-1 -m 0" + kPy}));
}

TEST(PlanCores, OneNodeTwoCoresTwoInstances) {
  FakeSysfs sys(MachineShape{1, 2, 1});
  LaunchOptions o = script();
  o.ninstances = 2;
  o.ncores_per_instance = 1;
  EXPECT_EQ(instance_lines(make_plan(o, sys.read(), {}, fake_host())),
            (Lines{"cpus=0-0 mem=0 cmd=/usr/bin/numactl -C 0-0 -m 0" + kPy,
                   "cpus=1-1 mem=0 cmd=/usr/bin/numactl -C 1-1 -m 0" + kPy}));
}

TEST(PlanCores, CgroupLimitedMachinePlansOnlyAllowedCpus) {
  FakeSysfs sys(MachineShape{2, 4, 2});
  sys.limit_cgroup_v2("/job", "2-5,10-13", "0-1");
  LaunchOptions o = script();
  o.throughput_mode = true;
  Topology topo = sys.read();
  EXPECT_EQ(instance_lines(make_plan(o, topo, {}, fake_host())),
            (Lines{"cpus=2-3 mem=0 cmd=/usr/bin/numactl -C 2-3 -m 0" + kPy,
                   "cpus=4-5 mem=1 cmd=/usr/bin/numactl -C 4-5 -m 1" + kPy}));
  LaunchOptions all = script();
  all.use_logical_core = true;
  all.ncores_per_instance = 2;
  EXPECT_EQ(instance_lines(make_plan(all, topo, {}, fake_host())),
            (Lines{"cpus=2-3 mem=0 cmd=/usr/bin/numactl -C 2-3 -m 0" + kPy,
                   "cpus=10-11 mem=0 cmd=/usr/bin/numactl -C 10-11 -m 0" + kPy,
                   "cpus=4-5 mem=1 cmd=/usr/bin/numactl -C 4-5 -m 1" + kPy,
                   "cpus=12-13 mem=1 cmd=/usr/bin/numactl -C 12-13 -m 1" + kPy}));
}

TEST(PlanCores, MemoryNodeForbiddenByCpusetFallsBackToAllowedOnes) {
  FakeSysfs sys(MachineShape{2, 2, 1});
  sys.limit_cgroup_v2("/job", "0-3", "0");
  LaunchOptions o = script();
  o.throughput_mode = true;
  Plan p = make_plan(o, sys.read(), {}, fake_host());
  EXPECT_EQ(p.instances[1].memory_nodes, (std::vector<int>{0}));
}

}  // namespace
}  // namespace bp::launcher
