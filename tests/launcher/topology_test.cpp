#include <gtest/gtest.h>

#include "backplane/error.h"
#include "launcher/cpu_list.h"
#include "launcher_test_support.h"

namespace bp::launcher {
namespace {

using testing::FakeSysfs;
using testing::MachineShape;
using V = std::vector<int>;

TEST(Topology, OneNodeTwoCores) {
  FakeSysfs sys(MachineShape{1, 2, 1});
  Topology t = sys.read();
  EXPECT_EQ(t.online_cpus, (V{0, 1}));
  EXPECT_EQ(t.cpu_nodes, (V{0}));
  EXPECT_EQ(t.memory_nodes, (V{0}));
  EXPECT_EQ(t.physical_cores(), (V{0, 1}));
  EXPECT_EQ(t.logical_cpus(), (V{0, 1}));
  EXPECT_TRUE(t.restrictions.empty());
}

TEST(Topology, TwoNodesFourCoresWithHyperThreads) {
  FakeSysfs sys(MachineShape{2, 4, 2});
  Topology t = sys.read();
  EXPECT_EQ(t.allowed_cpus.size(), 16u);
  EXPECT_EQ(t.cpu_nodes, (V{0, 1}));
  EXPECT_EQ(t.physical_cores(), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(t.physical_cores(1), (V{4, 5, 6, 7}));
  EXPECT_EQ(t.logical_cpus(0), (V{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(t.node_of(12), 1);
  EXPECT_EQ(t.node_of(99), -1);
  EXPECT_EQ(t.summary(), "2 NUMA nodes, 8 physical cores, 16 logical CPUs allowed (0-15 of online 0-15)");
}

TEST(Topology, FourNodesTwentyEightCores) {
  FakeSysfs sys(MachineShape{4, 28, 2});
  Topology t = sys.read();
  EXPECT_EQ(t.cpu_nodes, (V{0, 1, 2, 3}));
  EXPECT_EQ(t.physical_cores().size(), 112u);
  EXPECT_EQ(format_ranges(t.physical_cores(3)), "84-111");
  EXPECT_EQ(format_ranges(t.logical_cpus(3)), "84-111,196-223");
}

TEST(Topology, CgroupV2CpusetRestrictsCpusAndMemory) {
  FakeSysfs sys(MachineShape{2, 4, 2});
  sys.limit_cgroup_v2("/job/step", "2-5,10-13", "1");
  Topology t = sys.read();
  EXPECT_EQ(t.logical_cpus(), (V{2, 3, 10, 11, 4, 5, 12, 13}));
  EXPECT_EQ(t.physical_cores(), (V{2, 3, 4, 5}));
  EXPECT_EQ(t.memory_nodes, (V{1}));
  EXPECT_FALSE(t.is_allowed(0));
  EXPECT_TRUE(t.is_online(0));
  ASSERT_EQ(t.restrictions.size(), 1u);
  EXPECT_NE(t.restrictions[0].find("/job/step"), std::string::npos);
}

TEST(Topology, CgroupCpusetIsInheritedFromTheParent) {
  FakeSysfs sys(MachineShape{1, 4, 1});
  sys.limit_cgroup_v2("/job", "1-2", "0");
  sys.write("proc/self/cgroup", "0::/job/child/grandchild");  // no cpuset files of its own
  EXPECT_EQ(sys.read().logical_cpus(), (V{1, 2}));
}

TEST(Topology, CgroupV1CpusetHierarchy) {
  FakeSysfs sys(MachineShape{2, 4, 1});
  sys.limit_cgroup_v1("/docker/abc", "4-7", "1");
  Topology t = sys.read();
  EXPECT_EQ(t.cpu_nodes, (V{1}));
  EXPECT_EQ(t.physical_cores(), (V{4, 5, 6, 7}));
  EXPECT_EQ(t.memory_nodes, (V{1}));
}

TEST(Topology, MemsAllowedNarrowsMemoryNodes) {
  FakeSysfs sys(MachineShape{2, 2, 1});
  sys.set_mems_allowed("0");
  EXPECT_EQ(sys.read().memory_nodes, (V{0}));
}

TEST(Topology, WithoutNodeDirectoriesEverythingIsNodeZero) {
  FakeSysfs sys(MachineShape{2, 2, 1}, /*with_node_dirs=*/false);
  Topology t = sys.read();
  EXPECT_EQ(t.cpu_nodes, (V{0}));
  EXPECT_EQ(t.memory_nodes, (V{0}));
  EXPECT_EQ(t.logical_cpus(), (V{0, 1, 2, 3}));
}

TEST(Topology, NoAllowedCpuIsAnError) {
  FakeSysfs sys(MachineShape{1, 2, 1});
  sys.limit_cgroup_v2("/x", "7", "0");
  EXPECT_THROW(sys.read(), bp::Error);
}

TEST(Topology, MissingSysfsIsAnError) {
  TopologySources s;
  s.sysfs_root = "/nonexistent/sys";
  s.use_affinity_mask = false;
  EXPECT_THROW(read_topology(s), bp::Error);
}

TEST(Topology, ThisMachineRespectsTheAffinityMask) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  Topology t = read_topology();
  ASSERT_FALSE(t.allowed_cpus.empty());
  for (const Cpu& cpu : t.allowed_cpus) EXPECT_TRUE(CPU_ISSET(cpu.id, &set)) << cpu.id;
  EXPECT_EQ(static_cast<int>(t.allowed_cpus.size()), CPU_COUNT(&set));
}

}  // namespace
}  // namespace bp::launcher
