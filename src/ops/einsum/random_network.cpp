// Seeded random networks (random_network.h).

#include "ops/einsum/random_network.h"

#include <random>
#include <vector>

namespace bp::ops::einsum {
namespace {

// An integer in [lo, hi] from the generator's raw output, the same everywhere.
int draw(std::mt19937& rng, int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1)); }

}  // namespace

Network random_network(RandomKind kind, int n, unsigned seed) {
  std::mt19937 rng(seed);
  const int max_size = kind == RandomKind::regular ? 9 : 7;
  Network net;
  net.inputs.resize(static_cast<std::size_t>(n));
  int label = 0;
  auto add = [&](const std::vector<int>& operands, bool output) {
    if (label >= kMaxLabels) return;
    for (int o : operands) net.inputs[o].add(label);
    if (output) net.output.add(label);
    net.sizes.push_back(draw(rng, 2, max_size));
    ++label;
  };
  auto two_distinct = [&] {
    const int a = draw(rng, 0, n - 1);
    int b = draw(rng, 0, n - 2);
    return std::vector<int>{a, b >= a ? b + 1 : b};
  };
  if (kind == RandomKind::regular) {
    for (int e = 0; e < n * 3 / 2; ++e) add(two_distinct(), false);
  } else {
    for (int i = 0; i + 1 < n; ++i) add({i, i + 1}, false);
    for (int e = 0; e < n / 2; ++e) {
      std::vector<int> ops = two_distinct();
      if (draw(rng, 0, 5) == 0) ops.push_back(draw(rng, 0, n - 1));  // may repeat one: a label once per operand
      add(ops, false);
    }
  }
  add({draw(rng, 0, n - 1)}, true);
  add({draw(rng, 0, n - 1)}, true);
  return net;
}

}  // namespace bp::ops::einsum
