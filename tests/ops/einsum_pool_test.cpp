// The pool of sets "auto" recombines trees with, and the cut trees it
// fills it with (src/ops/einsum/path_pool.h): the pool's tree is a real
// tree of the network whose cost is what solve() says, never costlier than
// a tree it was given, exactly optimal_path's when the pool holds every
// set, and cut trees alone always make a tree.

#include <gtest/gtest.h>

#include <bit>

#include "ops/einsum/path_pool.h"
#include "ops/einsum/paths.h"
#include "ops/einsum/random_network.h"
#include "ops/einsum/tree.h"

namespace bp::ops::einsum {
namespace {

double cost(const Network& net, const Path& p) { return evaluate(net, p).opt_cost; }

// The pool's tree, checked: it covers the network, and solve()'s cost is
// the cost evaluate() gives its path.
double solved(const Network& net, SetPool& pool) {
  Tree t;
  double c = -1;
  EXPECT_TRUE(pool.solve(t, c));
  EXPECT_EQ(t.nodes[t.root].set, Leaves(net).all());
  const Path p = tree_to_path(t, net.size());
  EXPECT_NEAR(cost(net, p), c, 1e-9 * c);
  return c;
}

TEST(EinsumPool, OneTreeGivesItsOwnCostAndMoreTreesNeverCostMore) {
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (unsigned seed = 1; seed <= 6; ++seed) {
      const Network net = random_network(kind, 14, 300 + seed);
      const Leaves lv(net);
      const Path greedy = greedy_path(net), branch = branch_path(net, 1);
      SetPool pool(lv);
      pool.add_tree(*path_to_tree(net, greedy));
      EXPECT_NEAR(solved(net, pool), cost(net, greedy), 1e-9 * cost(net, greedy)) << seed;
      pool.add_tree(*path_to_tree(net, branch));
      EXPECT_LE(solved(net, pool), std::min(cost(net, greedy), cost(net, branch)) * (1 + 1e-12)) << seed;
    }
}

TEST(EinsumPool, EverySetInThePoolGivesTheOptimum) {
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (unsigned seed = 1; seed <= 4; ++seed) {
      const Network net = random_network(kind, 9, 500 + seed);
      const Leaves lv(net);
      SetPool pool(lv);
      // Smaller sets first, so each set's parts are in the pool already.
      for (int ones = 2; ones <= net.size(); ++ones)
        for (uint64_t s = 1; s <= lv.all(); ++s)
          if (std::popcount(s) == ones) pool.add(s, s & (~s + 1));
      const double opt = cost(net, optimal_path(net));
      EXPECT_NEAR(solved(net, pool), opt, 1e-9 * opt) << seed;
    }
}

TEST(EinsumPool, CutTreesMakeATreeAndTheSameOnesFromTheSameSeed) {
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (int n : {5, 17, 30}) {
      const Network net = random_network(kind, n, 700 + n);
      const Leaves lv(net);
      double first = 0;
      for (int run = 0; run < 2; ++run) {
        SetPool pool(lv);
        CutTrees cuts(lv);
        Draws rng(42);
        for (double imbalance : {0.0, 0.3, 0.9}) cuts.add_tree(pool, rng, imbalance);
        const double c = solved(net, pool);
        if (run == 0) first = c;
        EXPECT_EQ(c, first) << "n=" << n;
      }
    }
}

TEST(EinsumPool, DrawsAreUniformAndGumbel) {
  Draws rng(7);
  double sum = 0, gumbel = 0;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) {
    const double u = rng.uniform(2, 5);
    ASSERT_TRUE(u >= 2 && u < 5) << u;
    sum += u;
    gumbel += rng.gumbel();
  }
  EXPECT_NEAR(sum / kDraws, 3.5, 0.02);
  EXPECT_NEAR(gumbel / kDraws, 0.5772, 0.02);  // the Euler-Mascheroni constant
}

}  // namespace
}  // namespace bp::ops::einsum
