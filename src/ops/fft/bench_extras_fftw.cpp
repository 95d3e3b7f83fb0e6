// `backplane bench fft`'s extra measurement: with the plan cached, what one
// call of the op costs against a bare FFTW execute of the very plan it runs
// (the target: at most 1.1x), for a 1-D 4096-point and a 2-D 512 x
// 512 complex64 transform on one thread. Batches of op calls and of bare
// executes alternate; each batch is timed in this thread's CPU time (other
// processes on a shared machine do not count) and the medians over the
// batches are reported, with the median of the ratios of paired batches.

#include <time.h>

#include <vector>

#include "backplane/runtime.h"
#include "core/median.h"
#include "ops/fft/fftw_plan.h"
#include "ops/fft/params.h"

namespace bp::ops::fft {
namespace {

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

struct Timed {
  double op_us, bare_us, ratio;  // medians per call, and of the paired batches' ratios
};

// `batches` pairs of batches of `iterations` calls: op, then bare.
template <class Op, class Bare>
Timed interleaved(int batches, int iterations, Op&& op, Bare&& bare) {
  std::vector<double> ops, bares, ratios;
  for (int b = 0; b < batches; ++b) {
    const double t0 = thread_cpu_us();
    for (int i = 0; i < iterations; ++i) op();
    const double t1 = thread_cpu_us();
    for (int i = 0; i < iterations; ++i) bare();
    const double t2 = thread_cpu_us();
    ops.push_back((t1 - t0) / iterations);
    bares.push_back((t2 - t1) / iterations);
    ratios.push_back(ops.back() / bares.back());
  }
  return {median(ops), median(bares), median(ratios)};
}

}  // namespace

std::vector<std::pair<std::string, double>> bench_extras() {
  struct Case {
    const char* name;
    Shape shape;
    std::vector<int64_t> dims;
    int iterations;
  };
  const Case cases[] = {{"1-D 4096", {4096}, {-1}, 400}, {"2-D 512x512", {512, 512}, {-2, -1}, 4}};
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
    const auto op = [&] { (void)run(e.prepare(args)); };
    const auto bare = [&] { plan->run(p.in, p.out); };
    for (int i = 0; i < c.iterations; ++i) op(), bare();  // warm
    const Timed t = interleaved(31, c.iterations, op, bare);
    out.emplace_back(std::string(c.name) + " op call", t.op_us);
    out.emplace_back(std::string(c.name) + " bare execute", t.bare_us);
    out.emplace_back(std::string(c.name) + " ratio", t.ratio);
  }
  set_num_threads(threads);
  return out;
}

}  // namespace bp::ops::fft
