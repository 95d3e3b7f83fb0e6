// Operand sets, joins and contraction trees (tree.h).

#include "ops/einsum/tree.h"

#include <algorithm>
#include <bit>
#include <functional>

namespace bp::ops::einsum {

Leaves::Leaves(const Network& net) : net_(&net), adjacent_(net.inputs.size(), 0) {
  const int n = net.size();
  all_ = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  for (int i = 0; i < n; ++i) net.inputs[i].for_each([&](int l) { holders_[l] |= uint64_t{1} << i; });
  for (int i = 0; i < n; ++i)
    (net.inputs[i] - net.output).for_each([&](int l) { adjacent_[i] |= holders_[l]; });
  for (int i = 0; i < n; ++i) adjacent_[i] &= ~(uint64_t{1} << i);
}

LabelSet Leaves::unite(uint64_t set) const {
  LabelSet out;
  for (uint64_t s = set; s; s &= s - 1) out |= net_->inputs[std::countr_zero(s)];
  return out;
}

uint64_t Leaves::neighbours(uint64_t set) const {
  uint64_t out = 0;
  for (uint64_t s = set; s; s &= s - 1) out |= adjacent_[std::countr_zero(s)];
  return out & ~set;
}

Join pair_cost(const Leaves& leaves, uint64_t a, LabelSet a_idx, uint64_t b, LabelSet b_idx, LabelSet result) {
  const Network& net = leaves.net();
  // The ways each side can enter: as it is, or (a lone operand) reduced first.
  struct Way {
    LabelSet labels;
    double pre;
  };
  auto ways = [&](uint64_t set, LabelSet reduced, Way out[2]) {
    if (set & (set - 1)) {  // more than one operand
      out[0] = {reduced, 0};
      return 1;
    }
    const LabelSet raw = net.inputs[std::countr_zero(set)];
    out[0] = {raw, 0};
    if (raw == reduced) return 1;
    out[1] = {reduced, flop_count(net, raw, true, 1)};
    return 2;
  };
  Way wa[2], wb[2];
  const int na = ways(a, a_idx, wa), nb = ways(b, b_idx, wb);
  Join best;
  best.cost = -1;
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j) {
      const LabelSet c = wa[i].labels | wb[j].labels;
      const double cost = wa[i].pre + wb[j].pre + flop_count(net, c, !(c - result).empty(), 2);
      if (best.cost < 0 || cost < best.cost) best = {cost, i == 1, j == 1};
    }
  return best;
}

Path ssa_to_linear(const std::vector<std::vector<int>>& ssa, int operands) {
  std::vector<int> alive(static_cast<std::size_t>(operands));
  for (int i = 0; i < operands; ++i) alive[i] = i;
  int next = operands;
  Path path;
  for (const auto& step : ssa) {
    std::vector<int> positions;
    for (int id : step) positions.push_back(static_cast<int>(std::lower_bound(alive.begin(), alive.end(), id) - alive.begin()));
    for (int id : step) alive.erase(std::lower_bound(alive.begin(), alive.end(), id));
    alive.push_back(next++);  // new ids are the largest: the list stays sorted
    path.push_back(std::move(positions));
  }
  return path;
}

Path tree_to_path(const Tree& tree, int operands) {
  std::vector<std::vector<int>> ssa;
  int next = operands;
  std::function<int(int)> emit = [&](int node) -> int {
    const Tree::Node& n = tree.nodes[node];
    if (n.left < 0) return std::countr_zero(n.set);
    int l = emit(n.left), r = emit(n.right);
    if (n.reduce_left) ssa.push_back({l}), l = next++;
    if (n.reduce_right) ssa.push_back({r}), r = next++;
    ssa.push_back({std::min(l, r), std::max(l, r)});
    return next++;
  };
  emit(tree.root);
  return ssa_to_linear(ssa, operands);
}

std::optional<Tree> path_to_tree(const Network& net, const Path& path) {
  const int n = net.size();
  if (n > kMaxSetOperands) return std::nullopt;
  Tree t;
  // The list as the path sees it: each entry a tree node, and whether it is
  // an input operand reduced by a one-operand step.
  struct Entry {
    int node;
    bool reduced;
  };
  std::vector<Entry> list;
  for (int i = 0; i < n; ++i) {
    t.nodes.push_back({uint64_t{1} << i, -1, -1, false, false});
    list.push_back({i, false});
  }
  for (const auto& step : path) {
    if (step.size() == 1) {
      Entry& e = list.at(static_cast<std::size_t>(step[0]));
      if (t.nodes[e.node].left >= 0 || e.reduced) return std::nullopt;
      Entry moved{e.node, true};
      list.erase(list.begin() + step[0]);
      list.push_back(moved);
      continue;
    }
    if (step.size() != 2) return std::nullopt;
    const Entry a = list.at(static_cast<std::size_t>(step[0])), b = list.at(static_cast<std::size_t>(step[1]));
    t.nodes.push_back({t.nodes[a.node].set | t.nodes[b.node].set, a.node, b.node, a.reduced, b.reduced});
    list.erase(list.begin() + std::max(step[0], step[1]));
    list.erase(list.begin() + std::min(step[0], step[1]));
    list.push_back({static_cast<int>(t.nodes.size()) - 1, false});
  }
  if (list.size() != 1 || list[0].reduced) return std::nullopt;
  t.root = list[0].node;
  return t;
}

}  // namespace bp::ops::einsum
