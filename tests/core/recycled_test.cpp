// make_recycled (src/core/recycled.h, Note [Recycled call blocks]): a
// thread's freed blocks come back to its next make_recycled of the same
// size, objects are built and destroyed exactly once, and blocks freed on
// another thread or at thread exit are neither lost nor freed twice (the
// sanitizer builds run this too).

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/recycled.h"

namespace {

std::atomic<int> g_alive{0};

template <int Bytes>
struct Counted {
  explicit Counted(int v) : value(v) { ++g_alive; }
  ~Counted() { --g_alive; }
  Counted(const Counted&) = delete;
  int value;
  char pad[Bytes] = {};
};

using Small = Counted<8>;
using Large = Counted<200>;

// Empties this thread's store, so each test starts from nothing kept.
void drain_store() {
  auto& s = bp::detail::t_recycled_store;
  for (int i = 0; i < bp::detail::RecycledStore::kSlots; ++i) {
    ::operator delete(s.block[i]);
    s.block[i] = nullptr;
  }
}

TEST(Recycled, SameSizeReusesTheBlockOnOneThread) {
  drain_store();
  const void* first;
  {
    auto a = bp::detail::make_recycled<Small>(7);
    EXPECT_EQ(a->value, 7);
    first = a.get();
  }
  auto b = bp::detail::make_recycled<Small>(9);
  EXPECT_EQ(b.get(), first);
  EXPECT_EQ(b->value, 9);  // built afresh in the old block
}

TEST(Recycled, ObjectsAreBuiltAndDestroyedOnce) {
  drain_store();
  const int before = g_alive.load();
  {
    auto a = bp::detail::make_recycled<Small>(1);
    auto b = bp::detail::make_recycled<Large>(2);
    auto c = a;  // a second owner: destroyed once, when the last goes
    EXPECT_EQ(g_alive.load(), before + 2);
  }
  EXPECT_EQ(g_alive.load(), before);
  for (int i = 0; i < 100; ++i) (void)bp::detail::make_recycled<Large>(i);
  EXPECT_EQ(g_alive.load(), before);
}

TEST(Recycled, TwoSizesAreKeptSideBySide) {
  drain_store();
  const void *small, *large;
  {
    auto a = bp::detail::make_recycled<Small>(1);
    auto b = bp::detail::make_recycled<Large>(2);
    small = a.get();
    large = b.get();
  }
  auto b = bp::detail::make_recycled<Large>(3);
  auto a = bp::detail::make_recycled<Small>(4);
  EXPECT_EQ(a.get(), small);
  EXPECT_EQ(b.get(), large);
}

TEST(Recycled, AThirdBlockGoesToTheHeap) {
  drain_store();
  std::vector<std::shared_ptr<Small>> held;
  for (int i = 0; i < 3; ++i) held.push_back(bp::detail::make_recycled<Small>(i));
  const void* kept0 = held[0].get();
  const void* kept1 = held[1].get();
  held.clear();  // the first two freed are kept, the third is freed
  auto x = bp::detail::make_recycled<Small>(0);
  auto y = bp::detail::make_recycled<Small>(0);
  EXPECT_TRUE((x.get() == kept0 && y.get() == kept1) || (x.get() == kept1 && y.get() == kept0));
}

TEST(Recycled, BlocksFreedOnAnotherThreadStayThere) {
  drain_store();
  auto a = bp::detail::make_recycled<Large>(5);
  const void* made_here = a.get();
  std::thread other([p = std::move(a)]() mutable {
    p.reset();  // freed on `other`: kept in its store, freed when it exits
    auto again = bp::detail::make_recycled<Large>(6);
    EXPECT_EQ(again->value, 6);
  });
  other.join();
  // This thread's store did not receive the block.
  auto b = bp::detail::make_recycled<Large>(7);
  EXPECT_EQ(b->value, 7);
  (void)made_here;
}

TEST(Recycled, ManyThreadsPassingBlocksAround) {
  const int before = g_alive.load();
  std::atomic<int> sum{0};
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<Small>> handoff(4);
  for (int t = 0; t < 4; ++t) handoff[t] = bp::detail::make_recycled<Small>(t);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t, mine = std::move(handoff[t])]() mutable {
      sum += mine->value;
      mine.reset();
      for (int i = 0; i < 2000; ++i) {
        auto s = bp::detail::make_recycled<Small>(i);
        auto l = bp::detail::make_recycled<Large>(i);
        if (s->value != i || l->value != i) sum += 1000000;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(sum.load(), 0 + 1 + 2 + 3);
  EXPECT_EQ(g_alive.load(), before);
}

}  // namespace
