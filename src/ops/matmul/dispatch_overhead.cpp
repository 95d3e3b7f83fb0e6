// The dispatch overhead of a warm 1x1x1 matmul, which `backplane bench
// matmul` prints after its table (the 1 us budget of docs/dispatch.md).

#include <chrono>

#include "backplane/flags.h"
#include "ops/matmul/front.h"
#include "ops/matmul/impls.h"
#include "ops/matmul/params.h"

namespace bp::ops::matmul {
namespace {

// Nanoseconds per select() on one problem, averaged over many calls.
double select_ns(const Params& params, int iterations) {
  const dispatch::Problem problem = problem_of(params);
  const dispatch::Op& op = matmul_op();
  (void)dispatch::select(op, problem, &params);  // warm: availability, autotune cache
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) (void)dispatch::select(op, problem, &params);
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / iterations;
}

}  // namespace

std::vector<std::pair<std::string, double>> dispatch_overhead() {
  Params p;
  p.a = random_tensor({1, 1}, DType::f32, 1);
  p.b = random_tensor({1, 1}, DType::f32, 2);
  p.out = Tensor::empty({1, 1}, DType::f32);
  p.m = p.n = p.k = 1;
  std::vector<std::pair<std::string, double>> out;
  out.emplace_back("select_ns_first_acceptable", select_ns(p, 200000));
  backends::cpu::flags_options autotune;
  autotune.benchmark = true;
  backends::cpu::flags_guard g(autotune);
  out.emplace_back("select_ns_autotune_cache", select_ns(p, 200000));
  return out;
}

}  // namespace bp::ops::matmul
