// The generic LRU plan cache behind cufft_plan_cache (spec 4.4).

#include <gtest/gtest.h>

#include "backplane/plan_cache.h"

namespace {

using Cache = bp::PlanCache<int, int>;

std::function<std::shared_ptr<int>()> maker(int value, int* made) {
  return [value, made] {
    ++*made;
    return std::make_shared<int>(value);
  };
}

TEST(PlanCache, HitsReuseAndMissesMake) {
  Cache c("test cache", 4);
  int made = 0;
  EXPECT_EQ(*c.get_or_create(1, maker(10, &made)), 10);
  EXPECT_EQ(*c.get_or_create(1, maker(99, &made)), 10);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(c.hits(), 1u);
  EXPECT_EQ(c.misses(), 1u);
  EXPECT_EQ(c.size(), 1u);
}

TEST(PlanCache, EvictsTheLeastRecentlyUsed) {
  Cache c("test cache", 2);
  int made = 0;
  c.get_or_create(1, maker(1, &made));
  c.get_or_create(2, maker(2, &made));
  c.get_or_create(1, maker(1, &made));  // 1 is now the most recent
  c.get_or_create(3, maker(3, &made));  // evicts 2
  EXPECT_EQ(c.size(), 2u);
  made = 0;
  c.get_or_create(1, maker(1, &made));
  EXPECT_EQ(made, 0);
  c.get_or_create(2, maker(2, &made));
  EXPECT_EQ(made, 1);
}

TEST(PlanCache, ShrinkingEvictsAtOnceAndZeroDisablesCaching) {
  Cache c("test cache", 4);
  int made = 0;
  for (int k = 0; k < 4; ++k) c.get_or_create(k, maker(k, &made));
  c.set_max_size(1);
  EXPECT_EQ(c.size(), 1u);
  c.set_max_size(0);
  EXPECT_EQ(c.size(), 0u);
  made = 0;
  c.get_or_create(7, maker(7, &made));
  c.get_or_create(7, maker(7, &made));
  EXPECT_EQ(made, 2);
  EXPECT_EQ(c.size(), 0u);
}

TEST(PlanCache, NegativeMaxSizeIsRefused) {
  Cache c("cuFFT plan cache", 4);
  try {
    c.set_max_size(-1);
    FAIL();
  } catch (const bp::Error& e) {
    EXPECT_EQ(e.kind(), bp::ErrorKind::Runtime);
    EXPECT_EQ(std::string(e.what()), "cuFFT plan cache size must be non-negative, but got -1");
  }
  EXPECT_EQ(c.max_size(), 4);
  c.clear();
  EXPECT_EQ(c.size(), 0u);
}

}  // namespace
