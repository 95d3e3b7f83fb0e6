// `backplane bench einsum`'s extra measurements: the path search on random
// networks (uncached, per strategy; this thread's CPU time), auto's path
// cost against dp's, and einsum against the direct matmul calls it stands
// for (wall clock: they use every thread), each measured within this one
// run (best of several).

#include <algorithm>
#include <time.h>

#include <chrono>
#include <random>

#include "backplane/ops/einsum.h"
#include "backplane/ops/matmul.h"
#include "ops/einsum/params.h"
#include "ops/einsum/random_network.h"

namespace bp::ops::einsum {
namespace {

using Clock = std::chrono::steady_clock;

// This thread's CPU time: a path search runs on one thread, and on a
// shared machine wall-clock time also counts the time it waited for a core.
double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

template <class Fn>
double best_cpu_ms(Fn&& fn, int runs) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const double t0 = cpu_ms();
    fn();
    best = std::min(best, cpu_ms() - t0);
  }
  return best;
}

template <class Fn>
double best_ms(Fn&& fn, int runs) {
  fn();
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

std::vector<std::pair<std::string, double>> bench_extras() {
  std::vector<std::pair<std::string, double>> out;
  struct Case {
    int n;
    Strategy s;
  };
  for (const Case c : {Case{16, Strategy::greedy}, Case{16, Strategy::dp}, Case{16, Strategy::automatic},
                       Case{30, Strategy::greedy}, Case{30, Strategy::automatic}}) {
    double total = 0;
    constexpr int kNetworks = 5;
    for (unsigned seed = 1; seed <= kNetworks; ++seed) {
      const Network net = random_network(RandomKind::regular, c.n, seed);
      total += best_cpu_ms([&] { (void)find_path(net, c.s); }, 3);
    }
    out.emplace_back(std::string("path_us_cpu_") + strategy_name(c.s) + "_" + std::to_string(c.n),
                     1e3 * total / kNetworks);
  }
  // Path quality: auto's cost over dp's (the exact optimum without outer
  // products) at sizes where dp still finishes in a bench run, the worst
  // network and the share over 1.2x; and auto's slowest search up to 30
  // operands. bench/einsum_auto_bench.cpp measures both on many more networks.
  constexpr int kQualityNetworks = 12;
  for (int n : {20, 24}) {
    double worst = 0;
    int over = 0;
    for (unsigned seed = 1; seed <= kQualityNetworks; ++seed) {
      const Network net = random_network(RandomKind::regular, n, seed);
      const double ratio = evaluate(net, find_path(net, Strategy::automatic).path).opt_cost /
                           evaluate(net, find_path(net, Strategy::dp).path).opt_cost;
      worst = std::max(worst, ratio);
      over += ratio > 1.2;
    }
    out.emplace_back("auto_cost_over_dp_worst_" + std::to_string(n), worst);
    out.emplace_back("auto_cost_over_dp_share_above_1.2_" + std::to_string(n), static_cast<double>(over) / kQualityNetworks);
  }
  double slowest = 0;
  for (int n = 16; n <= 30; n += 2)
    for (unsigned seed = 1; seed <= 4; ++seed) {
      const Network net = random_network(RandomKind::regular, n, seed);
      slowest = std::max(slowest, best_cpu_ms([&] { (void)find_path(net, Strategy::automatic); }, 3));
    }
  out.emplace_back("path_us_cpu_auto_slowest_16_to_30", 1e3 * slowest);
  // Execution: einsum against the matmul calls it amounts to, f32.
  const int64_t n = 256;
  std::vector<Tensor> m;
  for (unsigned i = 0; i < 4; ++i) m.push_back(random_tensor({n, n}, DType::f32, i + 1));
  const double chain = best_ms([&] { (void)bp::einsum("ab,bc,cd,de->ae", m); }, 5);
  const double chain_mm = best_ms([&] { (void)bp::matmul(bp::matmul(bp::matmul(m[0], m[1]), m[2]), m[3]); }, 5);
  out.emplace_back("chain4_256_einsum_over_matmul", chain / chain_mm);
  const Tensor a = random_tensor({8, n, n}, DType::f32, 5), b = random_tensor({8, n, n}, DType::f32, 6);
  const double bmm = best_ms([&] { (void)bp::einsum("bij,bjk->bik", {a, b}); }, 5);
  const double bmm_mm = best_ms([&] { (void)bp::matmul(a, b); }, 5);
  out.emplace_back("bij_bjk_8x256_einsum_over_matmul", bmm / bmm_mm);
  return out;
}

}  // namespace bp::ops::einsum
