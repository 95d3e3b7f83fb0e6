#include <gtest/gtest.h>

#include "backplane/error.h"
#include "launcher/cpu_list.h"

namespace bp::launcher {
namespace {

using V = std::vector<int>;

TEST(CpuList, ParsesKernelListSyntax) {
  EXPECT_EQ(parse_id_list("0-3,8,10-11\n", "x"), (V{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_id_list("5", "x"), (V{5}));
  EXPECT_EQ(parse_id_list("", "x"), V{});
  EXPECT_EQ(parse_id_list("3,1,1-2", "x"), (V{1, 2, 3}));  // sorted, deduplicated
}

TEST(CpuList, RejectsMalformedLists) {
  for (const char* bad : {"0-", "-1", "a", "3-1", "1,,2", "1-2-3", "0x1"})
    EXPECT_THROW(parse_id_list(bad, "subject"), bp::Error) << bad;
  try {
    parse_id_list("2-x", "node0/cpulist");
    FAIL();
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("node0/cpulist"), std::string::npos);
  }
}

// Found writing the cpu_list fuzzer (tests/fuzz): "0-2147483647" inserted two
// billion ids and its loop overflowed at INT_MAX. Ids are bounded.
TEST(CpuList, HugeIdsAndRangesAreRefusedAtOnce) {
  EXPECT_EQ(parse_id_list("65534-65535", "x"), (V{65534, 65535}));
  for (const char* bad : {"0-2147483647", "2147483647", "65536", "0-65536"}) {
    EXPECT_THROW(parse_id_list(bad, "x"), bp::Error) << bad;
    EXPECT_THROW(parse_core_list(bad), bp::Error) << bad;
  }
}

TEST(CpuList, CoreListKeepsOrderAndRejectsRepeats) {
  EXPECT_EQ(parse_core_list("3,1,2"), (V{3, 1, 2}));
  EXPECT_EQ(parse_core_list(" 0-2, 8 "), (V{0, 1, 2, 8}));
  EXPECT_THROW(parse_core_list("1,2,1"), bp::Error);
  EXPECT_THROW(parse_core_list(""), bp::Error);
  EXPECT_THROW(parse_core_list("0;1"), bp::Error);
}

TEST(CpuList, FormatsRangesThePyTorchWay) {
  EXPECT_EQ(format_ranges({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(format_ranges({0, 1, 2, 3, 8, 10, 11}), "0-3,8-8,10-11");
  EXPECT_EQ(format_ranges({5}), "5-5");
  EXPECT_EQ(format_ranges({}), "");
  EXPECT_EQ(join_ids({0, 1}), "0,1");
  EXPECT_EQ(intersect_sorted({0, 1, 2, 5}, {1, 5, 7}), (V{1, 5}));
}

}  // namespace
}  // namespace bp::launcher
