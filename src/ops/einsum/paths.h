#pragma once
// The contraction-path optimisers (opt_einsum's strategies, written for
// label masks: Note [Einsum networks] in network.h) and the path cache.
//
//   greedy      opt_einsum's greedy: Hadamard products of equal label sets
//               first, then the pair that removes the most memory, then
//               outer products smallest first (path_greedy.cpp)
//   optimal     the cheapest path over every pair order, outer products
//               included: dynamic programming over all subsets
//               (path_dp.cpp); beyond kOptimalMaxOperands, "dp"
//   dp          the cheapest path without outer products inside a
//               connected part of the network: dynamic programming over
//               connected sets under a growing cost cap (Pfeifer et al.
//               2014, as opt_einsum's dp) (path_dp.cpp)
//   branch-N    depth-first branch and bound over the N most promising
//               pairs at each step, all of them for branch-all (path_branch.cpp)
//   auto        by operand count, as opt_einsum's auto, but never worse
//               than dp where dp fits a budget; beyond, sampled greedy
//               paths with their subtrees re-planned (path_auto.cpp)
//
// Every optimiser may sum a label that only one operand has before that
// operand meets another (a one-operand step), which opt_einsum's dp does
// and its optimal and branch do not: our paths are never costlier.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "backplane/flags.h"
#include "ops/einsum/network.h"

namespace bp::ops::einsum {

enum class Strategy { automatic, greedy, optimal, dp, branch_1, branch_2, branch_all, left_to_right };

// "auto", "greedy", ..., "left-to-right".
const char* strategy_name(Strategy s);
// The strategies users name (every one but left-to-right); ValueError naming `subject` otherwise.
Strategy parse_strategy(const std::string& name, const std::string& subject);
Strategy strategy_of(flags::EinsumStrategy s);

inline constexpr int kOptimalMaxOperands = 16;

struct Found {
  Path path;
  std::string how;  // the optimiser that produced it ("optimal", "dp", "greedy + subtree dp", ...)
};

// The optimisers. Each takes a network of at least three operands.
Path greedy_path(const Network& net);
Path optimal_path(const Network& net);                       // all subsets (<= 64 operands)
// Connected-pair dynamic programming; nullopt when `budget` (> 0: most
// pairs considered) runs out first. `cap`: the cost of a known path of
// `net` (< 0: greedy's), which prunes the search (Note [Capped dp]).
// `spent`, when given, gets the pairs considered (counted with a budget).
std::optional<Path> dp_path(const Network& net, int64_t budget = 0, double cap = -1, int64_t* spent = nullptr);
Path branch_path(const Network& net, int nbranch);           // nbranch 0: all
// Every pair order, ending a path with one step over the rest where the
// memory limit forbids a pair (opt_einsum's optimal; factorial).
Path exhaustive_path(const Network& net);
Found auto_path(const Network& net);
// Re-plans every subtree of up to `window` pieces of `path` optimally; never costlier.
Path improve_subtrees(const Network& net, const Path& path, int window);
Path left_to_right_path(int operands);

// The path of `strategy` (one step over everything for two operands or
// fewer, as opt_einsum), searched afresh.
Found find_path(const Network& net, Strategy strategy);

// The same through the path cache: one entry per (network, strategy),
// least recently used first out beyond the bound.
std::shared_ptr<const Found> cached_path(const Network& net, Strategy strategy);
namespace path_cache {
struct Info {
  int64_t size, max_size, hits, misses;
};
Info info();
void clear();
void set_max_size(int64_t n);  // 0: cache nothing; ValueError when negative
}  // namespace path_cache

}  // namespace bp::ops::einsum
