#pragma once
// A toy op for the dispatch tests: four implementations with controllable
// checks, run counters and run times, so selection can be tested without a
// real kernel.

#include <atomic>
#include <chrono>
#include <thread>

#include "backplane/dispatch.h"

namespace bp::dispatch::testing {

struct ToyParams {
  int64_t size = 10;
  mutable std::atomic<int> runs[4] = {};  // per implementation, by id
  int delay_us[4] = {3000, 0, 1000, 2000};  // how long each implementation's run sleeps
};

inline bool check_small(const ToyParams& p, Reasons& r) {
  return p.size <= 100 || r.fail("size <= 100", [&] { return std::to_string(p.size); });
}
inline bool check_mkldnn_enabled(const ToyParams&, Reasons& r) {
  return backends::mkldnn::enabled() || r.fail("mkldnn.enabled = true", "false");
}

inline void sleep_us(int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

// builtin:fast (small problems only, slowest when run), openblas:nondet
// (nondeterministic, fastest), onednn:gated (mkldnn.enabled), ref:any.
inline Op& toy_op() {
  static Op& op = [] () -> Op& {
    OpConfig config;
    config.name = "toy";
    config.preferred_library[0] = flags::Id::cpu_preferred_blas_library;
    config.autotune[0] = AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
    config.notes = [](const Problem&) { return std::vector<std::string>{"toy note"}; };
    Op& o = define_op(config);
    o.add(std::make_unique<Impl<ToyParams>>(
        "builtin:fast", "cpu", Properties{}, std::vector<Check<ToyParams>>{{"size", check_small}},
        [](const ToyParams& p) { p.runs[0]++; sleep_us(p.delay_us[0]); }));
    o.add(std::make_unique<Impl<ToyParams>>(
        "openblas:nondet", "cpu", Properties{.deterministic = false}, std::vector<Check<ToyParams>>{},
        [](const ToyParams& p) { p.runs[1]++; sleep_us(p.delay_us[1]); }));
    o.add(std::make_unique<Impl<ToyParams>>(
        "onednn:gated", "cpu", Properties{},
        std::vector<Check<ToyParams>>{{"enabled", check_mkldnn_enabled, {flags::Id::mkldnn_enabled}}},
        [](const ToyParams& p) { p.runs[2]++; sleep_us(p.delay_us[2]); }));
    o.add(std::make_unique<Impl<ToyParams>>("ref:any", "cpu", Properties{}, std::vector<Check<ToyParams>>{},
                                            [](const ToyParams& p) { p.runs[3]++; sleep_us(p.delay_us[3]); }));
    return o;
  }();
  return op;
}

// Defined at start-up, so a test that names "toy" before calling toy_op()
// (an implementations(...) guard) finds it even when run alone (ctest runs
// each test in its own process).
inline const bool toy_op_defined = (toy_op(), true);

inline Problem toy_problem(int64_t size) {
  static const char* const names[] = {"size"};
  Problem p;
  p.ndims = 1;
  p.dims[0] = size;
  p.dim_names = names;
  return p;
}

inline const Implementation& toy_select(const ToyParams& params) {
  return select(toy_op(), toy_problem(params.size), &params);
}

}  // namespace bp::dispatch::testing
