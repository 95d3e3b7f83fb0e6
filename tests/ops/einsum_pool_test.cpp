// The pool of sets "auto" recombines trees with, and the cut trees it
// fills it with (src/ops/einsum/path_pool.h): the pool's tree is a real
// tree of the network whose cost is what solve() says, never costlier than
// a tree it was given, exactly optimal_path's when the pool holds every
// set, and cut trees alone always make a tree.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <map>

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
  if (!pool.solve(t, c)) {
    ADD_FAILURE() << "no tree";
    return -1;
  }
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

// The network with the operands of `set` alone, its output what leaves the
// set (idx(set)): contracting it is contracting `set` inside any tree.
Network inside_of(const Network& net, const Leaves& lv, uint64_t set) {
  Network sub;
  for (uint64_t r = set; r; r &= r - 1) sub.inputs.push_back(net.inputs[std::countr_zero(r)]);
  sub.output = lv.idx(set);
  sub.sizes = net.sizes;
  return sub;
}
// The network with the operands of `set` replaced by their intermediate:
// every tree holding `set` is `set`'s plan and a tree of this network.
Network outside_of(const Network& net, const Leaves& lv, uint64_t set) {
  Network quotient;
  quotient.inputs.push_back(lv.idx(set));
  for (int i = 0; i < net.size(); ++i)
    if (!(set >> i & 1)) quotient.inputs.push_back(net.inputs[i]);
  quotient.output = net.output;
  quotient.sizes = net.sizes;
  return quotient;
}

// With every set in the pool, a set's cheapest tree (solve's inside plus
// outside cost: Note [Pool unions]) is the optimum of the network inside it
// plus that of the network with it contracted, both from optimal_path (all
// subsets, written apart); leaves and the whole set lie on the optimum.
// Regular networks: each label on two operands or the output, so no
// operand sums labels of its own, which the two sides would count apart.
TEST(EinsumPool, CompletionsAreTheOptimaInsideAndOutside) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    const Network net = random_network(RandomKind::regular, 8, 900 + seed);
    const Leaves lv(net);
    SetPool pool(lv);
    for (int ones = 2; ones <= net.size(); ++ones)
      for (uint64_t s = 1; s <= lv.all(); ++s)
        if (std::popcount(s) == ones) pool.add(s, s & (~s + 1));
    Tree t;
    double best = 0;
    ASSERT_TRUE(pool.solve(t, best, true));
    const double opt = cost(net, optimal_path(net));
    EXPECT_NEAR(best, opt, 1e-9 * opt);
    int checked = 0;
    for (uint64_t s = 1; s <= lv.all(); ++s) {
      const int ones = std::popcount(s);
      double want = opt;
      if (ones >= 3 && net.size() - ones + 1 >= 3)
        want = cost(inside_of(net, lv, s), optimal_path(inside_of(net, lv, s))) +
               cost(outside_of(net, lv, s), optimal_path(outside_of(net, lv, s)));
      else if (ones != 1 && s != lv.all())
        continue;  // two-operand networks: no optimal_path
      EXPECT_NEAR(pool.cheapest_through(s), want, 1e-9 * want) << "seed=" << seed << " set=" << s;
      ++checked;
    }
    EXPECT_GT(checked, 100);
    EXPECT_EQ(pool.cheapest_through(0), std::numeric_limits<double>::infinity());  // not in the pool
  }
}

// add_unions() adds only unions of two disjoint pool sets that share a
// label, each on a pool tree within `reach` of the cheapest, at most `most`
// of them, then at most `chains` unions of one of those with one more such
// set; the tree after is never costlier, and the same from the same pool.
TEST(EinsumPool, UnionsOfWellPlacedSetsNeverCostMore) {
  std::size_t all_chains = 0;
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (int n : {12, 20, 28}) {
      const Network net = random_network(kind, n, 1100 + n);
      const Leaves lv(net);
      double after[2] = {0, 0};
      for (int run = 0; run < 2; ++run) {
        SetPool pool(lv);
        Draws rng(5);
        CutTrees cuts(lv);
        pool.add_tree(*path_to_tree(net, greedy_path(net)));
        for (int i = 0; i < 3; ++i) cuts.add_tree(pool, rng, 0.4);
        Tree t;
        double before = 0;
        ASSERT_TRUE(pool.solve(t, before, true));
        const std::size_t size = pool.size();
        std::vector<double> through(size);
        for (std::size_t i = 0; i < size; ++i) through[i] = pool.cheapest_through(pool.set_at(i));
        const std::size_t most = 40, chains = 15;
        const std::size_t added = pool.add_unions(before, 1.3, most, chains);
        EXPECT_LE(added, most + chains);
        EXPECT_EQ(pool.size(), size + added);
        if (n > 12) EXPECT_GT(added, 0u) << "n=" << n;
        // Each new set: a well-placed pool set (from before) joined with a
        // disjoint neighbour that is one too, or else (a chain) a new set
        // joined with such a set.
        std::size_t only_chains = 0;
        for (std::size_t k = size; k < pool.size(); ++k) {
          const uint64_t u = pool.set_at(k);
          auto made_of = [&](std::size_t from, std::size_t to) {
            for (std::size_t i = from; i < to; ++i) {
              const uint64_t a = pool.set_at(i);
              if ((a & ~u) || a == u || !(lv.neighbours(a) & (u ^ a))) continue;
              if (i < size && through[i] > 1.3 * before) continue;
              for (std::size_t j = 0; j < size; ++j)
                if (pool.set_at(j) == (u ^ a) && through[j] <= 1.3 * before) return true;
            }
            return false;
          };
          if (made_of(0, size)) continue;
          EXPECT_TRUE(made_of(size, k)) << "n=" << n << " union " << u;
          ++only_chains;
        }
        EXPECT_LE(only_chains, chains) << "n=" << n;
        all_chains += only_chains;
        after[run] = solved(net, pool);
        EXPECT_LE(after[run], before * (1 + 1e-12)) << "n=" << n;
        if (run == 1) EXPECT_EQ(after[0], after[1]) << "n=" << n;
      }
    }
  EXPECT_GT(all_chains, 0u);
}

// solve()'s plans and completions on pools of hundreds of sets (trees,
// cut trees and two rounds of unions: many subset-index blocks, buckets
// starting anywhere in them), against the same dynamic programming written
// plainly: every pool set tried as a part of every other, pair_cost for
// each join, Leaves::idx for each intermediate.
TEST(EinsumPool, PlansAndCompletionsMatchThePlainDynamicProgramming) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  int big_pools = 0;
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (int n : {7, 16, 23, 30}) {
      const Network net = random_network(kind, n, 1500 + n);
      const Leaves lv(net);
      SetPool pool(lv);
      Draws rng(11);
      CutTrees cuts(lv);
      pool.add_tree(*path_to_tree(net, greedy_path(net)));
      for (int i = 0; i < 6; ++i) cuts.add_tree(pool, rng, 0.5);
      Tree t;
      double c = 0;
      for (int round = 0; round < 3; ++round) {
        ASSERT_TRUE(pool.solve(t, c, true));
        if (round < 2) pool.add_unions(c, 2.0, 300, 100);
      }
      const std::size_t size = pool.size();
      big_pools += size > 200;
      // The plain dynamic programming: plans by size, then completions.
      std::map<uint64_t, int> at;
      std::vector<int> order(size);
      for (std::size_t i = 0; i < size; ++i) at[pool.set_at(i)] = static_cast<int>(i), order[i] = static_cast<int>(i);
      std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
        return std::popcount(pool.set_at(x)) < std::popcount(pool.set_at(y));
      });
      struct Split {
        int s, a, b;
        double cost;
      };
      std::vector<Split> splits;
      std::vector<double> plan(size, kInf), completion(size, kInf);
      for (int i : order) {
        const uint64_t s = pool.set_at(i);
        if (std::popcount(s) == 1) plan[i] = 0;
        for (int a = 0; a < static_cast<int>(size); ++a) {
          const uint64_t sa = pool.set_at(a);
          if ((sa & ~s) || sa == s || !(sa & s & (~s + 1))) continue;  // a part holding s's lowest operand
          const auto b = at.find(s ^ sa);
          if (b == at.end()) continue;
          const double j = pair_cost(lv, sa, lv.idx(sa), s ^ sa, lv.idx(s ^ sa), lv.idx(s)).cost;
          splits.push_back({i, a, b->second, j});
          plan[i] = std::min(plan[i], plan[a] + plan[b->second] + j);
        }
      }
      const int root = at.at(lv.all());
      EXPECT_NEAR(c, plan[root], 1e-9 * plan[root]) << "n=" << n;
      completion[root] = 0;
      for (auto it = splits.rbegin(); it != splits.rend(); ++it) {
        if (completion[it->s] == kInf) continue;
        completion[it->a] = std::min(completion[it->a], completion[it->s] + plan[it->b] + it->cost);
        completion[it->b] = std::min(completion[it->b], completion[it->s] + plan[it->a] + it->cost);
      }
      int through = 0;
      for (std::size_t i = 0; i < size; ++i) {
        const double want = plan[i] + completion[i], got = pool.cheapest_through(pool.set_at(i));
        if (want == kInf) {
          EXPECT_EQ(got, kInf) << "n=" << n << " set=" << pool.set_at(i);
        } else {
          EXPECT_NEAR(got, want, 1e-9 * want) << "n=" << n << " set=" << pool.set_at(i);
          ++through;
        }
      }
      EXPECT_GT(through, n) << "n=" << n;
      // Bounded (Note [Bounded solve]): the same below the bound, at least
      // the bound (or none) above it; and no tree when none is under it.
      // On this pool, solve() reuses its last solve (Note [Incremental
      // solve]); on one with the same sets and no solve yet, it cannot.
      SetPool same(lv);
      for (std::size_t i = n; i < size; ++i) same.add(pool.set_at(i), pool.set_at(i) & (~pool.set_at(i) + 1));
      ASSERT_EQ(same.size(), size);
      {
        double none = 0;
        EXPECT_FALSE(same.solve(t, none, false, c * (1 - 1e-9))) << "n=" << n;  // its first solve
      }
      const double bound = 1.2 * c;
      for (SetPool* p : {&pool, &same}) {
        double bounded = 0;
        ASSERT_TRUE(p->solve(t, bounded, true, bound));
        EXPECT_NEAR(bounded, c, 1e-9 * c);
        for (std::size_t i = 0; i < size; ++i) {
          const double want = plan[i] + completion[i], got = p->cheapest_through(pool.set_at(i));
          if (want < bound * (1 - 1e-9))
            EXPECT_NEAR(got, want, 1e-9 * want) << "n=" << n << " set=" << pool.set_at(i);
          else
            EXPECT_GE(got, bound * (1 - 1e-9)) << "n=" << n << " set=" << pool.set_at(i);
        }
        EXPECT_FALSE(p->solve(t, bounded, false, c * (1 - 1e-9))) << "n=" << n;
        ASSERT_TRUE(p->solve(t, bounded, false, c * (1 + 1e-9)));
        EXPECT_NEAR(bounded, c, 1e-9 * c);
      }
    }
  EXPECT_GE(big_pools, 4);
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
