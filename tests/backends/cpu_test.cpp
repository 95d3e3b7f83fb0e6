// CPU detection and the capability rule (Note [CPU capability]).

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "backends/cpu/cpu_features.h"
#include "backplane/backends/cpu.h"
#include "backplane/flags.h"
#include "backplane_build_config.h"

namespace bp::backends::cpu {
namespace {

using flags::CpuCapabilityCap;

// The kernel's own list of CPU flags: an oracle independent of both detectors.
std::set<std::string> proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    return {std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  }
  return {};
}

TEST(CpuCapability, NamesArePyTorchs) {
  EXPECT_STREQ(capability_name(CpuCapability::Default), "DEFAULT");
  EXPECT_STREQ(capability_name(CpuCapability::Avx2), "AVX2");
  EXPECT_STREQ(capability_name(CpuCapability::Avx512), "AVX512");
}

TEST(CpuCapability, CapLowersButNeverRaisesTheLevel) {
  const CpuCapability levels[] = {CpuCapability::Default, CpuCapability::Avx2, CpuCapability::Avx512};
  for (CpuCapability hw : levels) {
    EXPECT_EQ(choose_cpu_capability(hw, CpuCapabilityCap::Auto).capability, hw);
    EXPECT_EQ(choose_cpu_capability(hw, CpuCapabilityCap::Default).capability, CpuCapability::Default);
    EXPECT_TRUE(choose_cpu_capability(hw, CpuCapabilityCap::Default).warning.empty());
  }
  EXPECT_EQ(choose_cpu_capability(CpuCapability::Avx512, CpuCapabilityCap::Avx2).capability, CpuCapability::Avx2);
  // Above the hardware: stay at the hardware's level, and say so.
  auto c = choose_cpu_capability(CpuCapability::Avx2, CpuCapabilityCap::Avx512);
  EXPECT_EQ(c.capability, CpuCapability::Avx2);
  EXPECT_NE(c.warning.find("AVX512"), std::string::npos) << c.warning;
  EXPECT_NE(c.warning.find("ATEN_CPU_CAPABILITY"), std::string::npos) << c.warning;
  c = choose_cpu_capability(CpuCapability::Default, CpuCapabilityCap::Avx2);
  EXPECT_EQ(c.capability, CpuCapability::Default);
  EXPECT_FALSE(c.warning.empty());
}

TEST(CpuCapability, ChosenLevelFollowsTheRuleForThisProcess) {
  const auto expected = choose_cpu_capability(detected_cpu_capability(), capability()).capability;
  EXPECT_EQ(cpu_capability(), expected);
  EXPECT_EQ(get_cpu_capability(), capability_name(expected));
}

TEST(CpuCapability, DetectedLevelFollowsPyTorchsRule) {
  const auto& f = detail::detected();
  const bool avx512 = f.has("avx512f") && f.has("avx512vl") && f.has("avx512bw") && f.has("avx512dq") && f.has("fma");
  const bool avx2 = f.has("avx2") && f.has("fma");
  const CpuCapability want = avx512 ? CpuCapability::Avx512 : avx2 ? CpuCapability::Avx2 : CpuCapability::Default;
  EXPECT_EQ(detected_cpu_capability(), want);
}

TEST(CpuFeatures, AgreeWithTheKernelsFlagList) {
  const auto flags = proc_cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags line";
  const auto& f = detail::detected();
  for (const char* name : detail::kIsaNames) EXPECT_EQ(f.has(name), flags.count(name) == 1) << name;
  EXPECT_EQ(has_avx512_bf16(), flags.count("avx512_bf16") == 1);
}

TEST(CpuFeatures, BuiltinFallbackAgreesWithTheDetectorInUse) {
  const auto builtin = detail::detect_with_builtins();
  EXPECT_EQ(builtin.detector, "compiler builtins");
  EXPECT_EQ(builtin.isa, detail::detected().isa);
  EXPECT_GE(builtin.logical, 1);
  EXPECT_GE(builtin.logical, builtin.cores);
}

TEST(CpuFeatures, UsesCpuinfoWhenBuiltWithIt) {
  const auto& f = detail::detected();
  if (BP_HAVE_CPUINFO) {
    EXPECT_EQ(f.detector, "cpuinfo");
  } else {
    EXPECT_EQ(f.detector, "compiler builtins");
  }
  EXPECT_GE(f.cores, 1);
  EXPECT_GE(f.logical, f.cores);
  EXPECT_GE(f.packages, 1);
}

TEST(CpuFeatures, ListsOnlyKnownNamesInOrder) {
  const auto features = cpu_features();
  size_t next = 0;
  const size_t n = sizeof(detail::kIsaNames) / sizeof(detail::kIsaNames[0]);
  for (const auto& name : features) {
    while (next < n && name != detail::kIsaNames[next]) ++next;
    EXPECT_LT(next, n) << name << " is unknown or out of order";
  }
}

}  // namespace
}  // namespace bp::backends::cpu
