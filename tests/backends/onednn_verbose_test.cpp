// Flag row mkldnn.verbose_level reaches oneDNN (Note [oneDNN verbose flag]).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backplane/backends/onednn.h"
#include "backplane/flags.h"
#include "backplane/log.h"

namespace bp::backends::mkldnn {
namespace {

TEST(OneDnnVerbose, EveryLevelIsAcceptedByOneDnn) {
  if (!is_available()) GTEST_SKIP() << "built without oneDNN";
  std::vector<std::string> warnings;
  auto old = log::set_warning_handler([&](const std::string& m) { warnings.push_back(m); });
  connect_verbose_flag();
  connect_verbose_flag();  // idempotent: one hook, not two
  for (int64_t level : {2, 1, 0}) flags::set_raw(flags::Id::mkldnn_verbose_level, level);
  log::set_warning_handler(old);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(flags::get_raw(flags::Id::mkldnn_verbose_level), 0);
}

}  // namespace
}  // namespace bp::backends::mkldnn
