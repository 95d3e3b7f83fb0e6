#pragma once
// What the subset-based optimisers share (path_dp.cpp, path_auto.cpp):
// the labels of the intermediate of any set of operands, the cost of
// joining two sets, and contraction trees with their linear paths.
//
// Note [Intermediates of operand sets]
// Contracting exactly the operands of a set S, in whatever order, leaves
// the labels of S that the output or an operand outside S needs: idx(S).
// So a step's cost depends only on the two sets it joins, which is what
// makes dynamic programming over sets exact. A lone operand may also sum
// its own labels first (a one-operand step costing 2 * its size), which
// can make the join cheaper; pair_cost() takes the cheaper way.

#include <cstdint>
#include <optional>
#include <vector>

#include "ops/einsum/network.h"

namespace bp::ops::einsum {

inline constexpr int kMaxSetOperands = 64;  // operand sets are 64-bit masks

class Leaves {
 public:
  explicit Leaves(const Network& net);  // net.size() <= kMaxSetOperands
  const Network& net() const { return *net_; }
  uint64_t all() const { return all_; }
  // idx(S) (Note [Intermediates of operand sets]).
  LabelSet idx(uint64_t set) const { return keep(set, unite(set)); }
  // The labels of `candidates` that the output or an operand outside `set` needs.
  LabelSet keep(uint64_t set, LabelSet candidates) const {
    LabelSet out = candidates & net_->output;
    (candidates - net_->output).for_each([&](int l) {
      if (holders_[l] & ~set) out.add(l);
    });
    return out;
  }
  LabelSet unite(uint64_t set) const;
  uint64_t holders(int label) const { return holders_[label]; }  // the operands holding it
  // Operands that share a label the output does not have with `set`'s operands.
  uint64_t neighbours(uint64_t set) const;

 private:
  const Network* net_;
  uint64_t all_ = 0;
  uint64_t holders_[kMaxLabels] = {};  // the operands holding each label
  std::vector<uint64_t> adjacent_;     // per operand: operands sharing a non-output label
};

struct Join {
  double cost = 0;
  bool reduce_a = false, reduce_b = false;  // a lone operand sums its own labels first
};
// Joining set a (labels a_idx = idx(a)) with set b into labels `result`.
Join pair_cost(const Leaves& leaves, uint64_t a, LabelSet a_idx, uint64_t b, LabelSet b_idx, LabelSet result);

// A binary contraction tree over operand sets.
struct Tree {
  struct Node {
    uint64_t set = 0;
    int left = -1, right = -1;  // -1: a leaf (one operand)
    bool reduce_left = false, reduce_right = false;
  };
  std::vector<Node> nodes;
  int root = -1;
};
// The linear path of a tree (children before parents, left before right).
Path tree_to_path(const Tree& tree, int operands);
// The tree of a path of pairwise steps (one-operand steps only on input
// operands); nullopt for any other path.
std::optional<Tree> path_to_tree(const Network& net, const Path& path);
// Static single assignment steps (operands numbered 0..n-1, each step's
// result the next number) to opt_einsum's linear format.
Path ssa_to_linear(const std::vector<std::vector<int>>& ssa, int operands);

}  // namespace bp::ops::einsum
