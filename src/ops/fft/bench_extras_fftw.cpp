// `backplane bench fft`'s extra measurement: with the plan cached, what one
// call of the op costs against a bare FFTW execute of the very plan it runs
// (the target: at most 1.1x), for a 1-D 4096-point and a 2-D 512 x
// 512 complex64 transform on one thread. Both loops run in one process, one
// after the other, repeated; the best repetition of each is reported.

#include <algorithm>
#include <chrono>

#include "backplane/runtime.h"
#include "ops/fft/fftw_plan.h"
#include "ops/fft/params.h"

namespace bp::ops::fft {
namespace {

using Clock = std::chrono::steady_clock;

template <class Fn>
double best_us(int iterations, Fn&& fn) {
  double best = 1e300;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iterations; ++i) fn();
    best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iterations);
  }
  return best;
}

}  // namespace

std::vector<std::pair<std::string, double>> bench_extras() {
  struct Case {
    const char* name;
    Shape shape;
    std::vector<int64_t> dims;
    int iterations;
  };
  const Case cases[] = {{"1-D 4096", {4096}, {-1}, 2000}, {"2-D 512x512", {512, 512}, {-2, -1}, 20}};
  const int threads = get_num_threads();
  set_num_threads(1);
  std::vector<std::pair<std::string, double>> out;
  for (const Case& c : cases) {
    Shape pairs = c.shape;
    pairs.push_back(2);
    const Tensor r = random_tensor(pairs, DType::f32, 3);
    const Tensor x = Tensor::from_storage(r.storage(), c.shape, contiguous_strides(c.shape), 0, DType::c64);
    const EntrySpec& e = entry("fftn");
    const Args args = bind(e, {}, {{"input", x}, {"dim", c.dims}});
    const Call first = e.prepare(args);
    (void)run(first);  // plans and caches
    const auto& p = *static_cast<const Params*>(first.params.get());
    const auto key = fftw_detail::describe_call(p, flags::get_raw(flags::Id::cpu_fft_planning_effort)).key();
    const auto plan = std::static_pointer_cast<fftw_detail::Plan>(backends::cpu::fft_plan_cache().peek(key));
    if (!plan) continue;  // caching disabled: nothing to compare
    const double op_us = best_us(c.iterations, [&] { (void)run(e.prepare(args)); });
    const double bare_us = best_us(c.iterations, [&] { plan->run(p.in, p.out); });
    out.emplace_back(std::string(c.name) + " op call", op_us);
    out.emplace_back(std::string(c.name) + " bare execute", bare_us);
    out.emplace_back(std::string(c.name) + " ratio", op_us / bare_us);
  }
  set_num_threads(threads);
  return out;
}

}  // namespace bp::ops::fft
