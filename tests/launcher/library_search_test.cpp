#include <gtest/gtest.h>

#include "launcher/library_search.h"
#include "launcher_test_support.h"

namespace bp::launcher {
namespace {

using testing::FakeSysfs;
using testing::MachineShape;

TEST(LibrarySearch, FolderOrderFollowsTheSpecPlusMultiarch) {
  auto dirs = library_search_dirs({{"CONDA_PREFIX", "/c"}, {"VIRTUAL_ENV", "/v"}, {"HOME", "/h"}}, "/r");
  ASSERT_GE(dirs.size(), 7u);
  EXPECT_EQ(dirs[0], "/c/lib");
  EXPECT_EQ(dirs[1], "/v/lib");
  EXPECT_EQ(dirs[2], "/h/.local/lib");
  EXPECT_EQ(dirs[3], "/r/usr/local/lib");
#if defined(__x86_64__)
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), "/r/usr/lib/x86_64-linux-gnu"), dirs.end());
#endif
  EXPECT_EQ(library_search_dirs({}).front(), "/usr/local/lib");
}

TEST(LibrarySearch, FindsVersionedNamesAsDebianInstallsThem) {
  FakeSysfs tree(MachineShape{});  // only for its temporary folder
  const std::string lib = tree.root() + "/lib";
  tree.write("lib/libjemalloc.so.2", "");
  tree.write("lib/libtcmalloc.so.4.5.10", "");
  tree.write("lib/libtcmalloc.so.4", "");
  tree.write("lib/libtcmalloc_minimal.so.4", "");
  tree.write("lib/libfoo.so.x", "");
  EXPECT_EQ(find_library_in("jemalloc", {lib}), lib + "/libjemalloc.so.2");
  EXPECT_EQ(find_library_in("tcmalloc", {lib}), lib + "/libtcmalloc.so.4");
  EXPECT_EQ(find_library_in("foo", {lib}), std::nullopt);
  EXPECT_EQ(find_library_in("iomp5", {lib, "/nonexistent"}), std::nullopt);
  tree.write("first/libjemalloc.so", "");
  EXPECT_EQ(find_library_in("jemalloc", {tree.root() + "/first", lib}), tree.root() + "/first/libjemalloc.so");
}

}  // namespace
}  // namespace bp::launcher
