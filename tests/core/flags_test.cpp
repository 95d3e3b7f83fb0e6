#include <gtest/gtest.h>

#include "backplane/flags.h"

TEST(Flags, Smoke) {
  EXPECT_TRUE(bp::backends::cudnn::enabled());
  {
    bp::backends::cudnn::flags_guard g({.benchmark = true});
    EXPECT_TRUE(bp::backends::cudnn::benchmark());
  }
  EXPECT_FALSE(bp::backends::cudnn::benchmark());
}
