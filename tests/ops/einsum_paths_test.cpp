// einsum's path optimisers and cost model: every strategy gives a valid
// path, optimal is the cheapest (checked against brute force on small
// networks), dp is the cheapest without outer products, the others never
// beat optimal, auto never loses to greedy, the cost model's numbers, the
// left-to-right path of opt_einsum.enabled = False, and the path cache's bound.
// (tests/python/test_einsum.py compares every strategy with opt_einsum's own
// costs, from a table generated with opt_einsum.)

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <tuple>

#include "backplane/flags.h"
#include "ops/einsum/params.h"
#include "ops/einsum/paths.h"
#include "ops/einsum/random_network.h"
#include "ops/einsum/tree.h"

namespace bp::ops::einsum {
namespace {

// A connected random network (random_network.h: a chain plus extra labels,
// a few on three operands, two output labels, sizes 2 to 7).
Network random_network(int n, unsigned seed) { return einsum::random_network(RandomKind::chain, n, seed); }

double cost(const Network& net, const Path& p) { return evaluate(net, p).opt_cost; }

// The cheapest pairwise path by trying every pair order (factorial; tiny
// networks only), without one-operand steps.
double brute_force(const Network& net) {
  double best = 1e300;
  std::function<void(std::vector<LabelSet>, double)> go = [&](std::vector<LabelSet> list, double sofar) {
    if (list.size() == 1) {
      best = std::min(best, sofar);
      return;
    }
    for (std::size_t i = 0; i < list.size(); ++i)
      for (std::size_t j = i + 1; j < list.size(); ++j) {
        LabelSet keep = net.output;
        for (std::size_t k = 0; k < list.size(); ++k)
          if (k != i && k != j) keep |= list[k];
        const LabelSet c = list[i] | list[j], r = c & keep;
        std::vector<LabelSet> next;
        for (std::size_t k = 0; k < list.size(); ++k)
          if (k != i && k != j) next.push_back(list[k]);
        next.push_back(r);
        go(next, sofar + flop_count(net, c, !(c - r).empty(), 2));
      }
  };
  go(net.inputs, 0);
  return best;
}

TEST(EinsumPaths, EveryStrategyGivesAValidPathAndOptimalIsCheapest) {
  for (int n : {3, 4, 5, 6, 7, 9}) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
      const Network net = random_network(n, seed * 31 + n);
      const double optimal = cost(net, find_path(net, Strategy::optimal).path);
      for (Strategy s : {Strategy::automatic, Strategy::greedy, Strategy::dp, Strategy::branch_1, Strategy::branch_2,
                         Strategy::branch_all, Strategy::left_to_right}) {
        const Path p = find_path(net, s).path;
        EXPECT_NO_THROW(evaluate(net, p)) << strategy_name(s);
        EXPECT_GE(cost(net, p), optimal * (1 - 1e-12)) << strategy_name(s) << " n=" << n << " seed=" << seed;
      }
      EXPECT_LE(cost(net, find_path(net, Strategy::automatic).path),
                cost(net, find_path(net, Strategy::greedy).path) * (1 + 1e-12));
      if (n <= 6) EXPECT_LE(optimal, brute_force(net) * (1 + 1e-12)) << "n=" << n << " seed=" << seed;
    }
  }
}

TEST(EinsumPaths, DpIsExactWithoutOuterProductsAndAutoMatchesItWhenItFits) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const Network net = random_network(10, seed);
    const auto dp = dp_path(net);
    ASSERT_TRUE(dp.has_value());
    // A connected network's optimum rarely needs an outer product: dp is
    // never cheaper than optimal and equal to it here.
    EXPECT_NEAR(cost(net, *dp), cost(net, optimal_path(net)), 1e-9 * cost(net, *dp));
    EXPECT_LE(cost(net, auto_path(net).path), cost(net, *dp) * (1 + 1e-12));
  }
  // A budget too small for the network: nothing, rather than a poor path.
  EXPECT_FALSE(dp_path(random_network(12, 3), 5).has_value());
}

// dp prunes with a cap, the cost of a known path (Note [Capped dp] in
// path_dp.cpp): greedy's by default, or the caller's. Whatever the cap, the
// answer is the uncapped search's cost: a cap at the optimum itself keeps
// the optimal plan, and one below it (no path's cost) falls back to a
// search without. Networks with a part of one operand and with parts joined
// only by output labels take the same road.
TEST(EinsumPaths, CappedDpIsStillExact) {
  std::vector<Network> nets;
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (int n : {6, 11, 15, 19})
      for (unsigned seed = 1; seed <= 4; ++seed) nets.push_back(einsum::random_network(kind, n, 500u * n + seed));
  Network split;  // "ab,bc,d,de->ae": two parts, one of them a lone operand's reduction
  split.inputs = {LabelSet::of(0) | LabelSet::of(1), LabelSet::of(1) | LabelSet::of(2), LabelSet::of(3),
                  LabelSet::of(3) | LabelSet::of(4)};
  split.output = LabelSet::of(0) | LabelSet::of(4);
  split.sizes = {3, 5, 7, 2, 4};
  nets.push_back(split);
  for (const Network& net : nets) {
    const auto uncapped = dp_path(net, 0, 1e300);
    ASSERT_TRUE(uncapped.has_value());
    const double best = cost(net, *uncapped);
    for (double cap : {-1.0, best, best * 1.5, best * 0.5, 1.0}) {
      const auto capped = dp_path(net, 0, cap);
      ASSERT_TRUE(capped.has_value()) << cap;
      EXPECT_NEAR(cost(net, *capped), best, 1e-9 * best) << "n=" << net.size() << " cap=" << cap;
    }
  }
}

TEST(EinsumPaths, OneOperandStepsSumWhatOnlyOneOperandHas) {
  // "abc,cd->d" with a and b large: summing them first is far cheaper, a
  // step opt_einsum's optimal never takes.
  Network net;
  net.inputs = {LabelSet::of(0) | LabelSet::of(1) | LabelSet::of(2), LabelSet::of(2) | LabelSet::of(3),
                LabelSet::of(3)};
  net.output = LabelSet::of(3);
  net.sizes = {50, 50, 4, 4};
  const Path p = optimal_path(net);
  EXPECT_EQ(p.front(), std::vector<int>{0});
  EXPECT_LT(cost(net, p), brute_force(net));
}

TEST(EinsumPaths, CostModelNumbers) {
  // ij,jk,kl->il with i=8, j=64, k=32, l=4: (jk,kl) then (ij,jl).
  Network net;
  net.inputs = {LabelSet::of(0) | LabelSet::of(1), LabelSet::of(1) | LabelSet::of(2),
                LabelSet::of(2) | LabelSet::of(3)};
  net.output = LabelSet::of(0) | LabelSet::of(3);
  net.sizes = {8, 64, 32, 4};
  const Costs c = evaluate(net, {{1, 2}, {0, 1}});
  EXPECT_EQ(c.naive_cost, 8.0 * 64 * 32 * 4 * 3);  // three terms and an inner product
  EXPECT_EQ(c.opt_cost, 2.0 * 64 * 32 * 4 + 2.0 * 8 * 64 * 4);
  EXPECT_EQ(c.largest_intermediate, 64.0 * 4);
  EXPECT_EQ(c.naive_scaling, 4);
  EXPECT_EQ(c.opt_scaling, 3);
  EXPECT_EQ(find_path(net, Strategy::optimal).path, (Path{{1, 2}, {0, 1}}));
  EXPECT_THROW(evaluate(net, {{0, 3}}), Error);
  EXPECT_THROW(evaluate(net, {{0, 1}}), Error);  // two operands left over
  EXPECT_THROW(evaluate(net, {{0, 0}, {0, 1}}), Error);
}

TEST(EinsumPaths, LeftToRightAsPyTorch) {
  EXPECT_EQ(left_to_right_path(3), (Path{{0, 1}, {0, 1}}));
  EXPECT_EQ(left_to_right_path(5), (Path{{0, 1}, {0, 3}, {0, 2}, {0, 1}}));
  const Network net = random_network(5, 1);
  // ((A0 A1) A2) ...: each step takes the running result (last) and the next operand (first).
  const Costs c = evaluate(net, left_to_right_path(5));
  EXPECT_EQ(c.steps.size(), 4u);
}

TEST(EinsumPaths, MemoryLimitBoundsEveryIntermediate) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    Network net = random_network(6, seed);
    double biggest = net.size_of(net.output);
    for (LabelSet s : net.inputs) biggest = std::max(biggest, net.size_of(s));
    net.memory_limit = biggest;
    for (Strategy s : {Strategy::optimal, Strategy::dp, Strategy::greedy, Strategy::branch_all, Strategy::automatic}) {
      const Costs c = evaluate(net, find_path(net, s).path);
      for (std::size_t i = 0; i < c.steps.size(); ++i)
        if (c.steps[i].operands.size() == 2 && i + 1 < c.steps.size()) {
          EXPECT_LE(c.steps[i].size, biggest) << strategy_name(s) << " seed " << seed;
        }
    }
  }
}

TEST(EinsumPaths, ImproveSubtreesNeverCostsMore) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    const Network net = random_network(14, seed);
    const Path g = greedy_path(net);
    for (int window : {3, 6, 8, 12})  // wider than the most it re-plans: as wide as it goes
      EXPECT_LE(cost(net, improve_subtrees(net, g, window)), cost(net, g) * (1 + 1e-12)) << window;
  }
}

// Above dp's reach auto samples greedy paths and re-plans their subtrees
// (Note [Sampled greedy], Note [Three openings]): on seeded random networks
// of both kinds, 18 and 20 operands, where dp still finishes quickly for
// comparison, its path is valid, never loses to greedy, is the same path
// every time (the draws come from a fixed seed) and is within 1.2x dp's
// cost on all but a few networks (bench/einsum_auto_bench.cpp measures the
// share above 1.2x up to 30 operands: about one in seventy at 8-30, none
// below 18), never beyond 2x here. Timings are the bench's.
TEST(EinsumPaths, AutoBeyondDpStaysNearItAndIsReproducible) {
  int networks = 0, over = 0;
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (int n : {18, 20})
      for (unsigned seed = 1; seed <= 6; ++seed, ++networks) {
        const Network net = einsum::random_network(kind, n, 1000u * n + seed);
        const Found a = auto_path(net);
        EXPECT_EQ(a.path, auto_path(net).path) << seed;
        const Costs c = evaluate(net, a.path);  // throws for a path that is not one of this network
        ASSERT_EQ(c.steps.size(), a.path.size());
        const double dp = cost(net, *dp_path(net));
        over += c.opt_cost > 1.2 * dp;
        EXPECT_LE(c.opt_cost, 2 * dp) << "n=" << n << " seed=" << seed << " " << a.how;
        EXPECT_LE(c.opt_cost, cost(net, greedy_path(net)) * (1 + 1e-12)) << seed;
      }
  EXPECT_LE(over, networks / 12) << "of " << networks;
}

// Where auto samples greedy paths (beyond dp's budget) and dp still finishes
// quickly enough for a test: auto's cost stays within 1.2x dp's on every
// one of these seeded networks of both kinds (the re-planning rounds of
// path_auto.cpp), and a second search gives the same path.
TEST(EinsumPaths, AutoWithinAFifthOfDpOnSeededNetworks) {
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (int n : {14, 16, 18, 20})
      for (unsigned seed = 1; seed <= 12; ++seed) {
        const Network net = einsum::random_network(kind, n, 1000u * n + seed);
        const Found a = auto_path(net);
        const double dp = cost(net, *dp_path(net));
        EXPECT_LE(cost(net, a.path), 1.2 * dp) << "n=" << n << " seed=" << seed << " " << a.how;
        EXPECT_EQ(a.path, auto_path(net).path) << "n=" << n << " seed=" << seed;
      }
}

// Beyond: 48 seeded networks of 22-26 operands (dp still finishes within
// a test's time there since Note [Capped dp]). auto's path is the same on a
// second search and within 1.2x dp's cost on all of them, the issue's
// target (1 above before the random openings of Note [Random openings], 2
// before the pool unions of Note [Pool unions], 3 before the pooled trees:
// bench/einsum_auto_bench.cpp measures the share up to 30 operands), never
// beyond 1.5x (1.56x before the unions). A change that loses ground here
// fails.
TEST(EinsumPaths, AutoNearDpFrom22To26Operands) {
  int over = 0;
  for (RandomKind kind : {RandomKind::regular, RandomKind::chain})
    for (int n : {22, 24, 26})
      for (unsigned seed = 1; seed <= 8; ++seed) {
        const Network net = einsum::random_network(kind, n, 1000u * n + seed);
        const Found a = auto_path(net);
        EXPECT_EQ(a.path, auto_path(net).path) << "n=" << n << " seed=" << seed;
        const double dp = cost(net, *dp_path(net)), c = cost(net, a.path);
        over += c > 1.2 * dp;
        EXPECT_LE(c, 1.5 * dp) << "n=" << n << " seed=" << seed << " " << a.how;
      }
  EXPECT_EQ(over, 0);
}

// A network whose path was 1.24x dp's for one operand that auto's tree
// joined 22 joins below where dp's joins it, out of every window's reach:
// the subtree moves of Note [Subtree moves] put it there.
TEST(EinsumPaths, AutoMovesAnOperandFarUpTheTree) {
  const Network net = einsum::random_network(RandomKind::regular, 30, 239591);
  const double dp = cost(net, *dp_path(net));
  EXPECT_LE(cost(net, auto_path(net).path), 1.01 * dp) << auto_path(net).how;
}

// Two networks whose paths were 1.83x and 1.49x dp's cost for a region at
// the root of 12 and 11 pieces, mostly lone operands, that auto's tree
// joined otherwise than dp's: wider than any window, and more than one
// move; and one at 1.21x for a subtree of 10 operands holding most of the
// cost. Note [Top region dp] plans them exactly.
TEST(EinsumPaths, AutoPlansTheRegionAtTheRootExactly) {
  for (const auto& [kind, n, seed] : {std::tuple{RandomKind::chain, 29, 233655u}, std::tuple{RandomKind::regular, 26, 209898u},
                                      std::tuple{RandomKind::regular, 28, 223748u}}) {
    const Network net = einsum::random_network(kind, n, seed);
    EXPECT_LE(cost(net, auto_path(net).path), 1.2 * cost(net, *dp_path(net))) << "n=" << n << " seed=" << seed;
  }
}

TEST(EinsumPaths, TreesRoundTrip) {
  const Network net = random_network(8, 4);
  const Path p = optimal_path(net);
  const auto t = path_to_tree(net, p);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(cost(net, tree_to_path(*t, 8)), cost(net, p), 1e-9 * cost(net, p));
  EXPECT_FALSE(path_to_tree(net, {{0, 1, 2, 3, 4, 5, 6, 7}}).has_value());
}

TEST(EinsumPaths, CacheHitsAndItsBound) {
  path_cache::clear();
  const Network a = random_network(5, 1), b = random_network(5, 2);
  auto first = cached_path(a, Strategy::greedy);
  auto again = cached_path(a, Strategy::greedy);
  EXPECT_EQ(first.get(), again.get());
  (void)cached_path(a, Strategy::dp);  // another strategy: another entry
  EXPECT_EQ(path_cache::info().hits, 1);
  EXPECT_EQ(path_cache::info().misses, 2);
  path_cache::set_max_size(1);
  EXPECT_EQ(path_cache::info().size, 1);
  (void)cached_path(b, Strategy::greedy);
  EXPECT_EQ(path_cache::info().size, 1);
  EXPECT_THROW(path_cache::set_max_size(-1), Error);
  path_cache::set_max_size(0);
  (void)cached_path(a, Strategy::greedy);
  EXPECT_EQ(path_cache::info().size, 0);
  path_cache::set_max_size(1024);
  path_cache::clear();
}

TEST(EinsumPaths, StrategyNames) {
  for (const char* name : {"auto", "greedy", "optimal", "dp", "branch-1", "branch-2", "branch-all"})
    EXPECT_STREQ(strategy_name(parse_strategy(name, "t")), name);
  EXPECT_THROW(parse_strategy("left-to-right", "t"), Error);
  EXPECT_THROW(parse_strategy("auto-hq", "t"), Error);
  for (int v = 0; v < flags::EinsumStrategy_count; ++v)
    EXPECT_STREQ(strategy_name(strategy_of(static_cast<flags::EinsumStrategy>(v))), flags::EinsumStrategy_names[v]);
}

}  // namespace
}  // namespace bp::ops::einsum
