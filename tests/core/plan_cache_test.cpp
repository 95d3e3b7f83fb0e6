// The generic LRU plan cache behind cufft_plan_cache (spec 4.4).

#include <gtest/gtest.h>

#include "backplane/plan_cache.h"
#include "backplane/runtime.h"

#include <atomic>
#include <thread>
#include <vector>

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

namespace {

using SizedCache = bp::PlanCache<int, int>;

std::function<SizedCache::Made()> sized(int value, int64_t bytes, int* made) {
  return [value, bytes, made] {
    ++*made;
    return SizedCache::Made{std::make_shared<int>(value), bytes};
  };
}

TEST(PlanCache, BytesAreCountedAndBounded) {
  SizedCache c("test cache", 10, bp::Device::cpu());
  int made = 0;
  bool cached = true;
  c.get_or_create_sized(1, sized(1, 100, &made), &cached);
  EXPECT_FALSE(cached);
  c.get_or_create_sized(2, sized(2, 50, &made), &cached);
  c.get_or_create_sized(1, sized(1, 100, &made), &cached);
  EXPECT_TRUE(cached);
  EXPECT_EQ(c.bytes(), 150);
  c.set_max_bytes(120);  // evicts 2, the least recently used
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.bytes(), 100);
  EXPECT_NE(c.peek(1), nullptr);
  EXPECT_EQ(c.peek(2), nullptr);
  c.get_or_create_sized(3, sized(3, 60, &made));  // 100 + 60 > 120: 1 goes
  EXPECT_EQ(c.peek(1), nullptr);
  EXPECT_EQ(c.bytes(), 60);
  made = 0;
  c.get_or_create_sized(4, sized(4, 500, &made));  // larger than the bound: used, not kept
  EXPECT_EQ(made, 1);
  EXPECT_EQ(c.peek(4), nullptr);
  EXPECT_EQ(c.bytes(), 60);
  EXPECT_THROW(c.set_max_bytes(-1), bp::Error);
  c.clear();
  EXPECT_EQ(c.bytes(), 0);
}

TEST(PlanCache, PeekLeavesOrderAndCountsAlone) {
  SizedCache c("test cache", 2);
  int made = 0;
  c.get_or_create_sized(1, sized(1, 0, &made));
  c.get_or_create_sized(2, sized(2, 0, &made));
  EXPECT_NE(c.peek(1), nullptr);  // not a use: 1 stays the least recently used
  EXPECT_EQ(c.hits(), 0u);
  c.get_or_create_sized(3, sized(3, 0, &made));
  EXPECT_EQ(c.peek(1), nullptr);
  EXPECT_NE(c.peek(2), nullptr);
}

TEST(PlanCache, PlanBytesShowInMemoryStats) {
  const bp::Device dev = bp::Device::cuda(7);  // no real device needed: the count is the cache's
  const int64_t before = bp::memory_stats(dev).plan_bytes;
  {
    SizedCache c("test cache", 4, dev);
    int made = 0;
    c.get_or_create_sized(1, sized(1, 1234, &made));
    EXPECT_EQ(bp::memory_stats(dev).plan_bytes, before + 1234);
  }
  EXPECT_EQ(bp::memory_stats(dev).plan_bytes, before);
}

TEST(PlanCache, ConcurrentCallersAllGetAPlan) {
  SizedCache c("test cache", 8);
  std::atomic<int> made{0};
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int key = (i + t) % 12;
        auto p = c.get_or_create_sized(key, [&] {
          ++made;
          return SizedCache::Made{std::make_shared<int>(key), 1};
        });
        if (*p != key) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(c.size(), 8u);
  EXPECT_EQ(c.bytes(), static_cast<int64_t>(c.size()));
  EXPECT_EQ(c.hits() + c.misses(), 8u * 200u);
}

// Note [Plan cache slots]: a slot finds its plan again as a counted hit that
// keeps the LRU order, and any removal (eviction, clear) turns it stale.
TEST(PlanCache, EraseDropsOneEntryItsBytesAndStaleSlots) {
  SizedCache c("test cache", 10, bp::Device::cpu());
  int made = 0;
  SizedCache::Slot slot;
  c.get_or_create_sized(1, sized(1, 100, &made), nullptr, &slot);
  c.get_or_create_sized(2, sized(2, 50, &made));
  const auto held = c.peek(1);  // a caller still using the plan keeps it alive
  c.erase(1);
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.bytes(), 50);
  EXPECT_EQ(c.peek(1), nullptr);
  EXPECT_NE(c.peek(2), nullptr);
  EXPECT_EQ(*held, 1);
  EXPECT_EQ(c.hit(slot), nullptr);  // a removal: slots are stale
  c.erase(7);  // absent: nothing happens
  EXPECT_EQ(c.size(), 1u);
  made = 0;
  c.get_or_create_sized(1, sized(1, 100, &made));  // made again
  EXPECT_EQ(made, 1);
  EXPECT_EQ(c.bytes(), 150);
}

TEST(PlanCache, SlotsHitUntilSomethingIsRemoved) {
  Cache c("test cache", 2);
  int made = 0;
  Cache::Slot one, two;
  EXPECT_EQ(c.hit(one), nullptr);  // a default slot is stale
  EXPECT_EQ(*c.get_or_create_sized(1, [&] { return Cache::Made{maker(10, &made)(), 0}; }, nullptr, &one), 10);
  c.get_or_create_sized(2, [&] { return Cache::Made{maker(20, &made)(), 0}; }, nullptr, &two);
  const uint64_t hits = c.hits();
  ASSERT_NE(c.hit(one), nullptr);
  EXPECT_EQ(*c.hit(one), 10);
  EXPECT_EQ(c.hits(), hits + 2);
  // 1 was hit through its slot, so it is the most recent: 3 evicts 2 ...
  c.get_or_create(3, maker(30, &made));
  made = 0;
  c.get_or_create(1, maker(1, &made));
  EXPECT_EQ(made, 0);
  // ... and that removal made every slot stale, even the one of a plan still cached.
  EXPECT_EQ(c.hit(one), nullptr);
  EXPECT_EQ(c.hit(two), nullptr);
  c.get_or_create_sized(1, [&] { return Cache::Made{maker(10, &made)(), 0}; }, nullptr, &one);
  EXPECT_EQ(*c.hit(one), 10);
  c.clear();
  EXPECT_EQ(c.hit(one), nullptr);
  // A plan that is not kept (caching disabled) leaves the slot stale.
  c.set_max_size(0);
  c.get_or_create_sized(1, [&] { return Cache::Made{maker(10, &made)(), 0}; }, nullptr, &one);
  EXPECT_EQ(c.hit(one), nullptr);
}

}  // namespace
