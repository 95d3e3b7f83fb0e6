// The fft op from C++: fftw:dft and native:stockham against the reference
// (ref:any) on each kind, odd/prime/power-of-two/mixed sizes and strided
// views; native:stockham's plans under concurrent calls; the plan cache
// (hits, LRU eviction, max_size 0, clear); concurrent calls from several
// threads while planning is serialised (and only planning); cufft:dft's checks without a GPU.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <complex>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "backends/fftw/fftw_planner.h"
#include "backplane/backends/fft_plan_cache.h"
#include "backplane/dispatch.h"
#include "backplane/op_spec.h"
#include "backplane_build_config.h"
#include "ops/fft/checks_cuda.h"
#include "ops/fft/params.h"

namespace bp::ops {
namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

Tensor complex_random(const Shape& shape, DType dtype, unsigned seed) {
  Shape pairs = shape;
  pairs.push_back(2);
  const Tensor r = random_tensor(pairs, dtype == DType::c128 ? DType::f64 : DType::f32, seed);
  return Tensor::from_storage(r.storage(), shape, contiguous_strides(shape), 0, dtype);
}

Tensor call(const std::string& name, std::vector<std::pair<std::string, ArgValue>> kw, const char* impl) {
  dispatch::ImplementationsGuard g("fft", {impl});
  const EntrySpec& e = entry(name);
  return std::get<Tensor>(run(e.prepare(bind(e, {}, std::move(kw)))));
}

double max_rel_diff(const Tensor& a, const Tensor& b) {
  const Tensor x = a.to(DType::c128).contiguous(), y = b.to(DType::c128).contiguous();
  EXPECT_EQ(x.shape(), y.shape());
  double diff = 0, scale = 1;
  for (int64_t i = 0; i < x.numel(); ++i) {
    diff = std::max(diff, std::abs(x.data_ptr<cd>()[i] - y.data_ptr<cd>()[i]));
    scale = std::max(scale, std::abs(y.data_ptr<cd>()[i]));
  }
  return diff / scale;
}

// The fast CPU implementations: native:stockham always, fftw:dft when built.
std::vector<const char*> fast_impls() {
  std::vector<const char*> out = {"native:stockham"};
  if (BP_HAVE_FFTW) out.insert(out.begin(), "fftw:dft");
  return out;
}

class AgainstReference : public ::testing::TestWithParam<std::tuple<const char*, int64_t>> {};

TEST_P(AgainstReference, EveryKindAndNorm) {
  const auto [impl, n] = GetParam();
  for (DType dt : {DType::c64, DType::c128}) {
    const double tol = dt == DType::c64 ? 2e-5 : 1e-11;
    const Tensor x = complex_random({3, n}, dt, 1);
    const Tensor r = x.to(dt == DType::c64 ? DType::f32 : DType::f64);
    for (const char* norm : {"backward", "ortho", "forward"}) {
      for (const char* name : {"fft", "ifft", "irfft", "hfft"}) {
        auto kw = [&] { return std::vector<std::pair<std::string, ArgValue>>{{"input", x}, {"norm", std::string(norm)}, {"n", n}}; };
        EXPECT_LE(max_rel_diff(call(name, kw(), impl), call(name, kw(), "ref:any")), tol) << impl << " " << name << " " << n;
      }
      for (const char* name : {"rfft", "ihfft"}) {
        auto kw = [&] { return std::vector<std::pair<std::string, ArgValue>>{{"input", r}, {"norm", std::string(norm)}}; };
        EXPECT_LE(max_rel_diff(call(name, kw(), impl), call(name, kw(), "ref:any")), tol) << impl << " " << name << " " << n;
      }
    }
  }
}
// Odd, prime (Bluestein above 13), power-of-two and mixed sizes, every radix of native:stockham.
INSTANTIATE_TEST_SUITE_P(Sizes, AgainstReference,
                         ::testing::Combine(::testing::ValuesIn(fast_impls()),
                                            ::testing::Values(1, 2, 3, 7, 8, 11, 15, 16, 31, 60, 64, 101, 143, 256,
                                                              1001, 2 * 1031)));

class ViewsAgainstReference : public ::testing::TestWithParam<const char*> {};

TEST_P(ViewsAgainstReference, StridedAndMultiDimensional) {
  const char* impl = GetParam();
  const Tensor base = complex_random({6, 10, 8}, DType::c64, 2);
  const Tensor wide = complex_random({40, 7, 37}, DType::c64, 3);  // columns beyond one block, with a remainder
  for (const Tensor& v : {base.slice(1, 0, 10, 3), base.transpose(0, 2), base.slice(0, std::nullopt, std::nullopt, -1), wide}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{0}, {1}, {2}, {0, 2}, {0, 1, 2}}) {
      auto kw = [&] { return std::vector<std::pair<std::string, ArgValue>>{{"input", v}, {"dim", dims}}; };
      EXPECT_LE(max_rel_diff(call("fftn", kw(), impl), call("fftn", kw(), "ref:any")), 2e-5) << impl;
      EXPECT_LE(max_rel_diff(call("ifftn", kw(), impl), call("ifftn", kw(), "ref:any")), 2e-5) << impl;
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Impls, ViewsAgainstReference, ::testing::ValuesIn(fast_impls()));

// Calls `impl` from `threads` threads at once, `calls` times each, on
// inputs [rows, n] of the given sizes, against the reference; returns how
// many results were wrong. `after(i)` runs after each thread's i-th call.
int concurrent_wrong_results(const char* impl, const std::vector<int64_t>& sizes, int64_t rows, int threads, int calls,
                             const std::function<void(int)>& after = {}) {
  std::vector<Tensor> inputs, expected;
  for (int64_t n : sizes) {
    inputs.push_back(complex_random({rows, n}, DType::c128, static_cast<unsigned>(n)));
    expected.push_back(call("fft", {{"input", inputs.back()}}, "ref:any"));
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < calls; ++i) {
        const std::size_t k = static_cast<std::size_t>(i * 7 + t * 11) % sizes.size();
        if (max_rel_diff(call("fft", {{"input", inputs[k]}}, impl), expected[k]) > 1e-11) ++bad;
        if (after) after(i);
      }
    });
  for (auto& th : pool) th.join();
  return bad.load();
}

// native:stockham's plans are shared between threads: concurrent calls of
// many sizes (more than its cache holds, so plans are dropped while in use)
// all give the reference's result.
TEST(NativeFft, ConcurrentCallsOfManySizes) {
  std::vector<int64_t> sizes;
  for (int64_t n = 40; n < 120; ++n) sizes.push_back(n);
  EXPECT_EQ(concurrent_wrong_results("native:stockham", sizes, 2, 4, 80), 0);
}

#if BP_HAVE_FFTW
TEST(FftPlanCache, HitsEvictionAndDisabling) {
  auto& cache = backends::cpu::fft_plan_cache();
  const int64_t keep = cache.max_size();
  cache.clear();
  cache.set_max_size(2);
  auto fft = [](int64_t n) { (void)call("fft", {{"input", complex_random({n}, DType::c64, 3)}}, "fftw:dft"); };
  const uint64_t misses0 = cache.misses();
  fft(16), fft(16);
  EXPECT_EQ(cache.misses(), misses0 + 1);
  fft(32), fft(48);  // 16 is the least recently used: evicted
  EXPECT_EQ(cache.size(), 2u);
  fft(48);
  EXPECT_EQ(cache.misses(), misses0 + 3);
  fft(16);
  EXPECT_EQ(cache.misses(), misses0 + 4);
  cache.set_max_size(0);
  EXPECT_EQ(cache.size(), 0u);
  fft(16), fft(16);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.misses(), misses0 + 6);
  cache.set_max_size(keep);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
}

// Note [The last plan of a thread]: repeated calls take the plan from the
// thread's last slot, still as counted hits that keep the LRU order; a
// cleared cache, an eviction or a changed planning effort sends the next
// call back to the cache's lookup, and results stay right throughout.
TEST(FftPlanCache, RepeatedCallsReuseTheLastPlanWhileItIsCached) {
  auto& cache = backends::cpu::fft_plan_cache();
  const int64_t keep = cache.max_size();
  cache.clear();
  cache.set_max_size(2);
  const Tensor a = complex_random({64}, DType::c64, 7), b = complex_random({80}, DType::c64, 8);
  const Tensor want_a = call("fft", {{"input", a}}, "ref:any"), want_b = call("fft", {{"input", b}}, "ref:any");
  auto fft = [&](const Tensor& x, const Tensor& want) {
    EXPECT_LE(max_rel_diff(call("fft", {{"input", x}}, "fftw:dft"), want), 2e-5);
  };
  const uint64_t misses0 = cache.misses(), hits0 = cache.hits();
  fft(a, want_a), fft(a, want_a), fft(a, want_a);
  EXPECT_EQ(cache.misses(), misses0 + 1);
  EXPECT_EQ(cache.hits(), hits0 + 2);  // the slot's hits are counted
  fft(b, want_b);
  for (int i = 0; i < 3; ++i) fft(b, want_b);  // b's plan from the slot: most recent
  fft(a, want_a);                              // a moves to the front by lookup
  fft(a, want_a);                              // a by its slot
  // A third size evicts the least recently used: b (a was used last).
  const Tensor c = complex_random({96}, DType::c64, 9);
  fft(c, call("fft", {{"input", c}}, "ref:any"));
  const uint64_t misses1 = cache.misses();
  fft(a, want_a);
  EXPECT_EQ(cache.misses(), misses1);  // a survived
  fft(b, want_b);
  EXPECT_EQ(cache.misses(), misses1 + 1);  // b was evicted
  // clear(): the slot is stale, the next call plans again.
  fft(b, want_b);
  cache.clear();
  fft(b, want_b);
  EXPECT_EQ(cache.misses(), misses1 + 2);
  EXPECT_EQ(cache.size(), 1u);
  // A changed planning effort is another key: another plan, not the slot's.
  {
    backends::cpu::flags_guard g({.fft_planning_effort = flags::FftPlanningEffort::Measure});
    fft(b, want_b);
    EXPECT_EQ(cache.misses(), misses1 + 3);
    fft(b, want_b);
    EXPECT_EQ(cache.misses(), misses1 + 3);
  }
  fft(b, want_b);  // back to the default effort: its plan is still cached
  EXPECT_EQ(cache.misses(), misses1 + 3);
  EXPECT_EQ(cache.size(), 2u);
  cache.set_max_size(keep);
  cache.clear();
}

TEST(FftPlanCache, ConcurrentCallsAreCorrectWhilePlanningIsSerialised) {
  backends::cpu::fft_plan_cache().clear();
  const std::vector<int64_t> sizes = {12, 17, 64, 100, 243, 256, 1000, 97};
  EXPECT_EQ(concurrent_wrong_results("fftw:dft", sizes, 4, 6, 40, [](int i) {
              if (i % 13 == 0) backends::cpu::fft_plan_cache().clear();  // plans die while others run
            }),
            0);
}

// FFTW's planner lock serialises planning only: while it is held (here by
// the test, as by another thread planning), a call whose plan is cached
// runs to the end and a call that must plan waits for the lock.
TEST(FftPlanCache, PlanningWaitsForThePlannerLockExecutionDoesNot) {
  backends::cpu::fft_plan_cache().clear();
  const Tensor cached_in = complex_random({2, 40}, DType::c64, 5), new_in = complex_random({2, 41}, DType::c64, 6);
  (void)call("fft", {{"input", cached_in}}, "fftw:dft");
  std::unique_lock<std::mutex> planner(backends::fftw::planner_mutex());
  auto planning = std::async(std::launch::async, [&] { return call("fft", {{"input", new_in}}, "fftw:dft"); });
  auto cached = std::async(std::launch::async, [&] { return call("fft", {{"input", cached_in}}, "fftw:dft"); });
  ASSERT_EQ(cached.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(planning.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  planner.unlock();
  EXPECT_LE(max_rel_diff(cached.get(), call("fft", {{"input", cached_in}}, "ref:any")), 2e-5);
  EXPECT_LE(max_rel_diff(planning.get(), call("fft", {{"input", new_in}}, "ref:any")), 2e-5);
}
#endif

TEST(FftCudaChecks, RankAndDtype) {
  auto p = std::make_shared<fft::Params>();
  p->dtype = DType::c64;
  p->dims = {0, 1, 2, 3};
  p->n = {2, 2, 2, 2};
  dispatch::Reasons r(true);
  bool ok = true;
  for (const auto& c : fft::cuda_checks::cufft_checks()) {
    r.begin_check(c.name);
    ok = c.fn(*p, r) && ok;
  }
  EXPECT_FALSE(ok);
  ASSERT_EQ(r.list().size(), 1u);
  EXPECT_EQ(r.list()[0].check, "rank");
}

TEST(FftEntries, ErrorsNameTheEntryAndArgument) {
  const Tensor x = complex_random({4}, DType::c64, 4);
  const EntrySpec& e = entry("fft");
  try {
    (void)run(e.prepare(bind(e, {}, {{"input", x}, {"n", int64_t{0}}})));
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("Invalid number of data points (0)"), std::string::npos);
  }
  const EntrySpec& r = entry("rfft");
  EXPECT_THROW((void)run(r.prepare(bind(r, {}, {{"input", x}}))), Error);
}

}  // namespace
}  // namespace bp::ops
