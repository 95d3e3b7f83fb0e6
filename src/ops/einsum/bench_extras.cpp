// `backplane bench einsum`'s extra measurements: the path search on random
// networks (uncached, per strategy) and einsum against the direct matmul
// calls it stands for, each measured within this one run (best of several).

#include <algorithm>
#include <chrono>
#include <random>

#include "backplane/ops/einsum.h"
#include "backplane/ops/matmul.h"
#include "ops/einsum/params.h"

namespace bp::ops::einsum {
namespace {

using Clock = std::chrono::steady_clock;

// A random network as opt_einsum's benchmarks make them: each of
// n * regularity / 2 labels joins two random operands, `outputs` more
// labels sit on one operand each and in the output; sizes 2 to 9.
Network random_network(int n, int regularity, int outputs, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, n - 1), size(2, 9);
  Network net;
  net.inputs.resize(static_cast<std::size_t>(n));
  int label = 0;
  for (int e = 0; e < n * regularity / 2 && label < kMaxLabels; ++e, ++label) {
    const int a = pick(rng);
    int b = pick(rng);
    while (b == a) b = pick(rng);
    net.inputs[a].add(label);
    net.inputs[b].add(label);
    net.sizes.push_back(size(rng));
  }
  for (int o = 0; o < outputs && label < kMaxLabels; ++o, ++label) {
    net.inputs[pick(rng)].add(label);
    net.output.add(label);
    net.sizes.push_back(size(rng));
  }
  return net;
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
      const Network net = random_network(c.n, 3, 2, seed);
      total += best_ms([&] { (void)find_path(net, c.s); }, 3);
    }
    out.emplace_back(std::string("path_us_") + strategy_name(c.s) + "_" + std::to_string(c.n), 1e3 * total / kNetworks);
  }
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
