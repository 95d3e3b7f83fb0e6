// Threads, memory statistics and the random generator.

#include <cstdint>
#include <dlfcn.h>
#include <gtest/gtest.h>
#ifdef _OPENMP  // a build with BACKPLANE_USE_OPENMP=OFF has no OpenMP to test
#include <omp.h>
#endif

#include <set>
#include <thread>
#include <vector>

#include "backplane/runtime.h"
#include "backplane/tensor.h"
#include "backplane_build_config.h"
#include "core/threads.h"
#include "tensor_test_util.h"

namespace {

using bp::ErrorKind;
using bp::test::expect_error;

// Restores the thread count a test changed.
struct ThreadCountGuard {
  int saved = bp::get_num_threads();
  ~ThreadCountGuard() { bp::set_num_threads(saved); }
};

TEST(Threads, SetNumThreadsReachesOpenMP) {
#ifndef _OPENMP
  GTEST_SKIP() << "built without OpenMP";
#else
  ThreadCountGuard guard;
  bp::set_num_threads(3);
  EXPECT_EQ(bp::get_num_threads(), 3);
  EXPECT_EQ(omp_get_max_threads(), 3);
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  EXPECT_EQ(team, 3);
  bp::set_num_threads(1);
  EXPECT_EQ(omp_get_max_threads(), 1);
#endif
}

TEST(Threads, OtherThreadsPickTheCountUp) {
#ifndef _OPENMP
  GTEST_SKIP() << "built without OpenMP";
#else
  ThreadCountGuard guard;
  bp::set_num_threads(5);
  int before = 0, after = 0;
  std::thread worker([&] {
    omp_set_num_threads(2);  // this thread's own OpenMP setting
    before = omp_get_max_threads();
    bp::threads::apply_num_threads_to_this_thread();
    after = omp_get_max_threads();
  });
  worker.join();
  EXPECT_EQ(before, 2);
  EXPECT_EQ(after, 5);
#endif
}

TEST(Threads, SetNumThreadsReachesOpenBLAS) {
  if (!BP_HAVE_OPENBLAS) GTEST_SKIP() << "built without OpenBLAS";
  // libopenblas is loaded with libbackplane; look its getter up at run time
  // because the test itself does not link OpenBLAS.
  auto get = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  ASSERT_NE(get, nullptr);
  ThreadCountGuard guard;
  bp::set_num_threads(3);
  EXPECT_EQ(get(), 3);
  bp::set_num_threads(1);
  EXPECT_EQ(get(), 1);
}

int g_hook_value = 0;

TEST(Threads, LateHooksGetTheCurrentCount) {
  ThreadCountGuard guard;
  bp::set_num_threads(4);
  bp::threads::register_hook("test", [](int n) { g_hook_value = n; });
  EXPECT_EQ(g_hook_value, 4);
  bp::set_num_threads(2);
  EXPECT_EQ(g_hook_value, 2);
}

TEST(Threads, RejectsCountsOutsideTheRange) {
  const int before = bp::get_num_threads();
  expect_error([] { bp::set_num_threads(0); }, ErrorKind::Value, {"set_num_threads", "got 0", "in [1, "});
  expect_error([] { bp::set_num_threads(-4); }, ErrorKind::Value, {"got -4"});
  // Note [Team sizes]: 10**6 threads crashed the OpenMP runtime.
  const std::string top = std::to_string(bp::max_num_threads()) + "]";
  expect_error([] { bp::set_num_threads(1000000); }, ErrorKind::Value, {"got 1000000", top.c_str()});
  EXPECT_EQ(bp::get_num_threads(), before);
  EXPECT_GE(bp::max_num_threads(), 1024);
}

TEST(Threads, TeamsAreCappedByWorkAndTheCount) {
  const int before = bp::get_num_threads();
  bp::set_num_threads(bp::max_num_threads());
  EXPECT_EQ(bp::threads::team_size(0), 1);
  EXPECT_EQ(bp::threads::team_size(1), 1);
  EXPECT_LE(bp::threads::team_size(int64_t{1} << 40), bp::max_num_threads());
#ifdef _OPENMP
  EXPECT_EQ(bp::threads::team_size(3), 3);
  bp::set_num_threads(2);
  EXPECT_EQ(bp::threads::team_size(int64_t{1} << 40), 2);
#endif
  bp::set_num_threads(before);
}

TEST(Memory, StatsFollowAllocationsAndPeakResets) {
  const bp::Device cpu = bp::Device::cpu();
  bp::reset_peak_memory_stats();
  const bp::MemoryStats start = bp::memory_stats(cpu);
  EXPECT_EQ(start.peak_bytes, start.current_bytes);
  {
    bp::Tensor a = bp::Tensor::empty({1000}, bp::DType::f32);
    bp::Tensor view = a.T().slice(0, 1, 5);  // views allocate nothing
    EXPECT_EQ(bp::memory_stats(cpu).current_bytes, start.current_bytes + 4000);
    {
      bp::StoragePtr workspace = bp::allocate_storage(cpu, 123);
      EXPECT_EQ(bp::memory_stats(cpu).current_bytes, start.current_bytes + 4123);
    }
    EXPECT_EQ(bp::memory_stats(cpu).peak_bytes, start.current_bytes + 4123);
  }
  EXPECT_EQ(bp::memory_stats(cpu).current_bytes, start.current_bytes);
  EXPECT_EQ(bp::memory_stats(cpu).peak_bytes, start.current_bytes + 4123);
  bp::reset_peak_memory_stats();
  EXPECT_EQ(bp::memory_stats(cpu).peak_bytes, start.current_bytes);
  const auto all = bp::memory_stats();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().first, cpu);
}

// Note [Host block cache]: a freed block of at most 1 MiB is kept and the next
// allocation of the same rounded size takes it back; larger blocks are not
// kept; empty_cache() returns everything; current_bytes never counts a cached
// block. (Off under AddressSanitizer, where only the accounting is checked.)
TEST(Memory, HostBlockCacheReusesSameSizeBlocksWithinBounds) {
  const bp::Device cpu = bp::Device::cpu();
  bp::empty_cache();
  EXPECT_EQ(bp::memory_stats(cpu).cached_bytes, 0);
  const int64_t in_use = bp::memory_stats(cpu).current_bytes;
  const void* first = nullptr;
  {
    bp::StoragePtr a = bp::allocate_storage(cpu, 32768 - 10);  // rounds to 32768
    first = a->data();
  }
  EXPECT_EQ(bp::memory_stats(cpu).current_bytes, in_use);
  const int64_t cached = bp::memory_stats(cpu).cached_bytes;
  EXPECT_TRUE(cached == 0 || cached == 32768) << cached;
  if (cached == 32768) {
    bp::StoragePtr other_size = bp::allocate_storage(cpu, 40000);
    EXPECT_NE(other_size->data(), first);  // a different rounded size does not take it
    bp::StoragePtr b = bp::allocate_storage(cpu, 32768);
    EXPECT_EQ(b->data(), first);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b->data()) % 64, 0u);
    EXPECT_EQ(bp::memory_stats(cpu).current_bytes, in_use + 32768 + 40000);
    EXPECT_EQ(bp::memory_stats(cpu).cached_bytes, 0);
  }
  {
    bp::StoragePtr big = bp::allocate_storage(cpu, (std::size_t{1} << 20) + 64);  // over the block bound
  }
  EXPECT_LE(bp::memory_stats(cpu).cached_bytes, 32768 + 40000);
  {  // many blocks: the cache stays within its 8 MiB
    std::vector<bp::StoragePtr> held;
    for (int i = 0; i < 40; ++i) held.push_back(bp::allocate_storage(cpu, std::size_t{1} << 20));
  }
  EXPECT_LE(bp::memory_stats(cpu).cached_bytes, int64_t{8} << 20);
  const int64_t before_release = bp::memory_stats(cpu).cached_bytes;
  EXPECT_EQ(bp::empty_cache(), before_release);
  EXPECT_EQ(bp::memory_stats(cpu).cached_bytes, 0);
  EXPECT_EQ(bp::memory_stats(cpu).current_bytes, in_use);
}

TEST(Random, PhiloxKnownAnswers) {
  // Random123's kat_vectors, "philox4x32 10" lines.
  EXPECT_EQ(bp::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (bp::PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(bp::philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (bp::PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(bp::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (bp::PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

std::vector<uint32_t> draw(uint64_t count) {
  const bp::PhiloxStream s = bp::default_generator().reserve(count);
  std::vector<uint32_t> out;
  for (uint64_t i = 0; i < count; ++i) out.push_back(s.u32(i));
  return out;
}

TEST(Random, ManualSeedReproducesTheStream) {
  bp::manual_seed(1234);
  const auto a1 = draw(10);
  const auto a2 = draw(10);
  EXPECT_EQ(bp::default_generator().offset(), 6u);  // 3 blocks per 10 numbers
  EXPECT_NE(a1, a2);
  bp::manual_seed(1234);
  EXPECT_EQ(draw(10), a1);
  EXPECT_EQ(draw(10), a2);
  bp::manual_seed(1235);
  EXPECT_NE(draw(10), a1);
}

TEST(Random, ConcurrentReservationsNeverOverlap) {
  bp::manual_seed(7);
  std::vector<uint64_t> firsts(8 * 100);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) firsts[t * 100 + i] = bp::default_generator().reserve(8).first_block;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(std::set<uint64_t>(firsts.begin(), firsts.end()).size(), firsts.size());
  EXPECT_EQ(bp::default_generator().offset(), 8u * 100 * 2);
}

TEST(Random, UniformIsInUnitIntervalWithSaneMean) {
  bp::manual_seed(99);
  const bp::PhiloxStream s = bp::default_generator().reserve(20000);
  double sum = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    const float u = s.uniform(i);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
  }
  EXPECT_NEAR(sum / 20000, 0.5, 0.01);
}

}  // namespace
