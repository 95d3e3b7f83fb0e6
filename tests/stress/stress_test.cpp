// Stress (issue 10): 8 threads for a few seconds, each entering nested flag
// scopes and implementations(...) scopes, changing process-wide flags,
// autotuning, saving and loading one shared autotune cache file and running
// matmul and SDPA. Every result is checked against an fp64 oracle and every
// thread checks that it sees its own scoped values, whatever the others do.
// BACKPLANE_STRESS_SECONDS sets the duration (default 3); `make check` runs
// it under ThreadSanitizer too.

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "backplane/ops/matmul.h"
#include "backplane/ops/sdpa.h"
#include "backplane/runtime.h"
#include "ops/matmul_test_util.h"
#include "ops/sdpa_test_util.h"

namespace bp::testing {
namespace {

constexpr int kThreads = 8;

double stress_seconds() {
  const char* s = std::getenv("BACKPLANE_STRESS_SECONDS");
  return s ? std::atof(s) : 3.0;
}

// Records the first failure of any thread (gtest assertions are thread-safe,
// but one clear message beats thousands).
struct Failures {
  std::mutex mutex;
  std::string first;
  std::atomic<int> count{0};
  void add(const std::string& what) {
    if (count++ == 0) {
      std::lock_guard<std::mutex> lock(mutex);
      first = what;
    }
  }
};

// One round of thread `t`, iteration `i`.
void round(int t, int i, const std::string& cache_path, Failures& f) {
  const std::string who = "thread " + std::to_string(t) + " round " + std::to_string(i) + ": ";
  const bool mkl_on = (t + i) % 2 == 0;
  const bool deterministic = t % 3 == 0;
  backends::mkldnn::flags_guard outer({.enabled = mkl_on});
  {
    backends::generic::flags_guard inner({.deterministic_algorithms = deterministic});
    backends::cpu::flags_guard tune({.benchmark = t % 2 == 1, .benchmark_limit = 1 + t % 3});
    if (backends::mkldnn::enabled() != mkl_on) f.add(who + "outer scope value lost");
    if (backends::generic::deterministic_algorithms() != deterministic) f.add(who + "inner scope value lost");
    if (backends::cpu::benchmark_limit() != 1 + t % 3) f.add(who + "cpu scope value lost");

    // matmul, restricted or not, against the oracle.
    const int64_t m = 3 + t, n = 5 + i % 7, k = 4 + (t * i) % 9;
    const Tensor a = random_tensor({m, k}, DType::f32, static_cast<uint32_t>(t * 1000 + i));
    const Tensor b = random_tensor({k, n}, DType::f32, static_cast<uint32_t>(t * 1000 + i + 1));
    std::optional<dispatch::ImplementationsGuard> only;
    if (i % 3 == 0) only.emplace("matmul", std::vector<std::string>{"ref:any"});
    const Tensor c = matmul(a, b);
    if (max_rel_error(c, oracle_2d(a, b)) > 1e-5) f.add(who + "matmul result wrong");
    if (only && explain_matmul(a, b).chosen->name() != "ref:any") f.add(who + "implementations scope lost");
  }
  if (backends::mkldnn::enabled() != mkl_on) f.add(who + "outer scope lost when the inner one closed");

  // SDPA on every implementation in turn.
  static const char* const impls[] = {"flash:cpu", "efficient:cpu", "math:any"};
  const dispatch::ImplementationsGuard one("sdpa", {impls[(t + i) % 3]});
  const Tensor q = random_tensor({1, 2, 4 + t, 8}, DType::f32, static_cast<uint32_t>(7 * t + i));
  const Tensor kv = random_tensor({1, 2, 6, 8}, DType::f32, static_cast<uint32_t>(11 * t + i));
  const Tensor o = sdpa(q, kv, kv, Tensor(), 0.0, i % 2 == 1);
  if (max_abs_error(o, sdpa_oracle(q, kv, kv, Tensor(), i % 2 == 1)) > 2e-5) f.add(who + "sdpa result wrong");

  // Process-wide changes and the shared cache file.
  try {
    if (t == 0) backends::generic::set_autotune_cache_max_size(i % 2 ? 3 : 4096);
    if (t == 1) set_num_threads(1 + i % 2);
    if (i % 4 == t % 4) dispatch::autotune_cache::save(cache_path);
    if (i % 5 == t % 5) dispatch::autotune_cache::load(cache_path);
  } catch (const std::exception& e) {
    f.add(who + "cache file or process-wide flag: " + e.what());
  }
}

TEST(Stress, EightThreadsScopesFlagsCacheAndOps) {
  std::string dir = ::testing::TempDir() + "/bp_stress_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string cache_path = dir + "/cache.txt";
  const int threads_before = get_num_threads();
  const int64_t max_before = backends::generic::autotune_cache_max_size();
  dispatch::autotune_cache::save(cache_path);  // so every load finds a file
  Failures f;
  std::atomic<int> rounds{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(stress_seconds());
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
        try {
          round(t, i, cache_path, f);
        } catch (const std::exception& e) {
          f.add("thread " + std::to_string(t) + ": " + e.what());
        }
        ++rounds;
      }
    });
  for (auto& th : pool) th.join();
  set_num_threads(threads_before);
  backends::generic::set_autotune_cache_max_size(max_before);
  dispatch::autotune_cache::clear();
  EXPECT_EQ(f.count.load(), 0) << f.first;
  EXPECT_GE(rounds.load(), kThreads);
  std::printf("stress: %d rounds in %.1f s\n", rounds.load(), stress_seconds());
  // The file every thread saved to is one valid cache.
  EXPECT_NO_THROW(dispatch::autotune_cache::load(cache_path));
  dispatch::autotune_cache::clear();
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace bp::testing
