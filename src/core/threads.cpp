#include "core/threads.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backplane/error.h"
#include "backplane/log.h"
#include "backplane/runtime.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bp {
namespace {

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int default_num_threads() {
#ifdef _OPENMP
  return std::min(omp_get_max_threads(), max_num_threads());
#else
  return hardware_threads();
#endif
}

// 0 until set_num_threads is called; then the user's count.
std::atomic<int> g_user_threads{0};
// Bumped on every set_num_threads, so threads notice a change cheaply.
std::atomic<uint64_t> g_generation{0};

struct HookList {
  std::mutex mutex;
  std::vector<std::pair<std::string, threads::Hook>> hooks;
};
HookList& hook_list() {
  static HookList list;
  return list;
}

void set_this_thread_openmp(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

}  // namespace

int max_num_threads() {
  static const int max = std::max(1024, 4 * hardware_threads());
  return max;
}

void set_num_threads(int n) {
  if (n < 1 || n > max_num_threads()) {
    throw_bad_value("set_num_threads", std::to_string(n),
                    "a number of threads in [1, " + std::to_string(max_num_threads()) + "]");
  }
  HookList& list = hook_list();
  std::lock_guard<std::mutex> lock(list.mutex);
  g_user_threads.store(n);
  g_generation.fetch_add(1);
  set_this_thread_openmp(n);
  for (const auto& entry : list.hooks) entry.second(n);
}

int get_num_threads() {
  const int n = g_user_threads.load();
  if (n > 0) return n;
  static const int initial = default_num_threads();
  return initial;
}

namespace {

// An OMP_NUM_THREADS above the maximum is clamped at load, as if
// set_num_threads(max) had been called, so every thread's OpenMP setting,
// OpenBLAS and oneDNN stay within it (Note [Team sizes]).
const bool env_count_clamped = [] {
#ifdef _OPENMP
  if (omp_get_max_threads() <= max_num_threads()) return false;
  log::warn("OMP_NUM_THREADS asks for " + std::to_string(omp_get_max_threads()) + " threads; using the maximum, " +
            std::to_string(max_num_threads()));
  set_num_threads(max_num_threads());
  return true;
#else
  return false;
#endif
}();

}  // namespace

namespace threads {

int team_size(int64_t work) {
#ifdef _OPENMP
  const int64_t n = std::min<int64_t>({omp_get_max_threads(), max_num_threads(), work});
  return static_cast<int>(std::max<int64_t>(n, 1));
#else
  (void)work;
  return 1;
#endif
}

void register_hook(const char* library, Hook hook) {
  HookList& list = hook_list();
  std::lock_guard<std::mutex> lock(list.mutex);
  list.hooks.emplace_back(library, hook);
  if (const int n = g_user_threads.load(); n > 0) hook(n);
}

int threads_for_work(double flops, double flops_per_thread) {
  if (flops_per_thread <= 0 || !(flops >= 0)) return team_size(INT64_MAX);
  const double worth = std::floor(flops / flops_per_thread);
  return team_size(worth >= 1 ? static_cast<int64_t>(std::min(worth, 1e9)) : 1);
}

ScopedTeamLimit::ScopedTeamLimit(int limit) {
#ifdef _OPENMP
  const int now = omp_get_max_threads();
  if (limit >= 1 && limit < now) {
    previous_ = now;
    omp_set_num_threads(limit);
  }
#else
  (void)limit;
#endif
}

ScopedTeamLimit::~ScopedTeamLimit() {
#ifdef _OPENMP
  if (previous_ > 0) omp_set_num_threads(previous_);
#endif
}

void apply_num_threads_to_this_thread() {
  thread_local uint64_t seen_generation = 0;
  const uint64_t now = g_generation.load(std::memory_order_acquire);
  if (now == seen_generation) return;
  seen_generation = now;
  set_this_thread_openmp(g_user_threads.load());
}

}  // namespace threads
}  // namespace bp
