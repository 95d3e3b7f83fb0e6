#pragma once
// Seeded random networks (Note [Einsum networks] in network.h) for the
// path optimisers' tests and measurements: the same network for the same
// arguments on every machine (std::mt19937 and our own draws from it, not
// the standard distributions, whose results differ between libraries).

#include "ops/einsum/network.h"

namespace bp::ops::einsum {

enum class RandomKind {
  // As opt_einsum's rand_equation (what its benchmarks and ours use): each
  // of n * 3 / 2 labels joins two distinct random operands, 2 more labels
  // sit on one operand each and in the output; sizes 2 to 9. It may fall
  // into several connected parts.
  regular,
  // A chain of operands (connected) plus n / 2 labels between two random
  // operands, one in six of them on a third operand too, and 2 output
  // labels; sizes 2 to 7.
  chain,
};

Network random_network(RandomKind kind, int n, unsigned seed);

}  // namespace bp::ops::einsum
