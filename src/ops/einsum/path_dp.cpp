// "optimal" and "dp": dynamic programming over operand sets (paths.h,
// Note [Intermediates of operand sets] in tree.h).

#include <algorithm>
#include <bit>
#include <limits>
#include <unordered_map>

#include "ops/einsum/paths.h"
#include "ops/einsum/tree.h"

namespace bp::ops::einsum {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every operand in one step: what opt_einsum's optimisers fall back to when
// a memory limit leaves no pairwise path.
Path all_at_once(int n) {
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[i] = i;
  return {all};
}

bool too_big(const Network& net, uint64_t set, uint64_t all, LabelSet labels) {
  return net.limited() && set != all && net.size_of(labels) > net.memory_limit;
}

struct Entry {
  double cost = kInf;
  LabelSet idx;
  uint64_t left = 0;  // 0: a leaf
  bool reduce_left = false, reduce_right = false;
};

// Builds tree nodes for `set` from a table of entries; returns the node.
template <class Lookup>
int build(Tree& t, uint64_t set, const Lookup& entry) {
  const Entry& e = entry(set);
  if (e.left == 0) {
    t.nodes.push_back({set, -1, -1, false, false});
    return static_cast<int>(t.nodes.size()) - 1;
  }
  const int l = build(t, e.left, entry), r = build(t, set ^ e.left, entry);
  t.nodes.push_back({set, l, r, e.reduce_left, e.reduce_right});
  return static_cast<int>(t.nodes.size()) - 1;
}

}  // namespace

// All subsets, outer products included: 3^n joins, exact.
Path optimal_path(const Network& net) {
  const int n = net.size();
  if (n > kOptimalMaxOperands) return dp_path(net).value_or(all_at_once(n));
  const Leaves lv(net);
  const std::size_t count = std::size_t{1} << n;
  std::vector<LabelSet> unite(count), idx(count);
  std::vector<Entry> table(count);
  for (uint64_t s = 1; s < count; ++s) {
    unite[s] = unite[s & (s - 1)] | net.inputs[std::countr_zero(s)];
    idx[s] = lv.keep(s, unite[s]);
  }
  for (int i = 0; i < n; ++i) table[uint64_t{1} << i] = {0, idx[uint64_t{1} << i], 0, false, false};
  const uint64_t all = lv.all();
  for (uint64_t s = 1; s < count; ++s) {
    if (std::popcount(s) < 2 || too_big(net, s, all, idx[s])) continue;
    Entry& best = table[s];
    best.idx = idx[s];
    const uint64_t low = s & (~s + 1);
    // Each split once: the part holding the lowest operand on the left.
    for (uint64_t a = (s - 1) & s; a; a = (a - 1) & s) {
      if (!(a & low)) continue;
      const uint64_t b = s ^ a;
      if (table[a].cost == kInf || table[b].cost == kInf) continue;
      const Join j = pair_cost(lv, a, idx[a], b, idx[b], idx[s]);
      const double cost = table[a].cost + table[b].cost + j.cost;
      if (cost < best.cost) best = {cost, idx[s], a, j.reduce_a, j.reduce_b};
    }
  }
  if (table[all].cost == kInf) return all_at_once(n);
  Tree t;
  t.root = build(t, all, [&](uint64_t s) -> const Entry& { return table[s]; });
  return tree_to_path(t, n);
}

namespace {

// DPccp over the connected parts of the network: every pair of disjoint
// connected sets joined by a label the output lacks, each pair once, in an
// order where both sides are final before their union is used.
class Ccp {
 public:
  Ccp(const Network& net, const Leaves& lv, int64_t budget) : net_(net), lv_(lv), budget_(budget) {
    for (int i = 0; i < net.size(); ++i) table_[uint64_t{1} << i] = {0, lv.idx(uint64_t{1} << i), 0, false, false};
  }
  // Solves the connected part `part`; false when the budget ran out.
  bool solve(uint64_t part) {
    for (int i = 63; i >= 0; --i) {
      const uint64_t v = uint64_t{1} << i;
      if (!(part & v)) continue;
      if (!emit_csg(v) || !csg_rec(v, below(i) | v)) return false;
    }
    return true;
  }
  const Entry* find(uint64_t set) const {
    auto it = table_.find(set);
    return it == table_.end() ? nullptr : &it->second;
  }

 private:
  static uint64_t below(int i) { return i == 0 ? 0 : (i >= 64 ? ~uint64_t{0} : (uint64_t{1} << i) - 1); }
  static uint64_t up_to(uint64_t set) { return below(std::countr_zero(set)) | (set & (~set + 1)); }

  bool csg_rec(uint64_t s1, uint64_t x) {
    const uint64_t nb = lv_.neighbours(s1) & ~x;
    if (!nb) return true;
    for (uint64_t s = nb; s; s = (s - 1) & nb)
      if (!emit_csg(s1 | s)) return false;
    for (uint64_t s = nb; s; s = (s - 1) & nb)
      if (!csg_rec(s1 | s, x | nb)) return false;
    return true;
  }
  bool emit_csg(uint64_t s1) {
    const uint64_t x = s1 | up_to(s1);
    const uint64_t nb = lv_.neighbours(s1) & ~x;
    for (int i = 63; i >= 0; --i) {
      const uint64_t v = uint64_t{1} << i;
      if (!(nb & v)) continue;
      if (!join(s1, v) || !cmp_rec(s1, v, x | (nb & (below(i) | v)))) return false;
    }
    return true;
  }
  bool cmp_rec(uint64_t s1, uint64_t s2, uint64_t x) {
    const uint64_t nb = lv_.neighbours(s2) & ~x;
    if (!nb) return true;
    for (uint64_t s = nb; s; s = (s - 1) & nb)
      if (!join(s1, s2 | s)) return false;
    for (uint64_t s = nb; s; s = (s - 1) & nb)
      if (!cmp_rec(s1, s2 | s, x | nb)) return false;
    return true;
  }
  bool join(uint64_t a, uint64_t b) {
    if (budget_ > 0 && ++joins_ > budget_) return false;
    const Entry* ea = find(a);
    const Entry* eb = find(b);
    if (!ea || !eb) return true;  // a side over the memory limit
    const uint64_t s = a | b;
    const LabelSet result = lv_.keep(s, ea->idx | eb->idx);
    if (too_big(net_, s, lv_.all(), result)) return true;
    const Join j = pair_cost(lv_, a, ea->idx, b, eb->idx, result);
    const double cost = ea->cost + eb->cost + j.cost;
    Entry& e = table_[s];  // may rehash: ea/eb are not used after this
    if (cost < e.cost) e = {cost, result, a, j.reduce_a, j.reduce_b};
    return true;
  }

  const Network& net_;
  const Leaves& lv_;
  int64_t budget_, joins_ = 0;
  std::unordered_map<uint64_t, Entry> table_;
};

}  // namespace

std::optional<Path> dp_path(const Network& net_in, int64_t budget) {
  const int n = net_in.size();
  if (n > kMaxSetOperands) return std::nullopt;
  // DPccp wants the operands of each connected part numbered breadth first
  // (Moerkotte & Neumann): search a renumbered copy, then map back.
  std::vector<int> order;  // order[new] = old
  {
    const Leaves lv0(net_in);
    uint64_t seen = 0;
    for (int root = 0; root < n; ++root) {
      if (seen & (uint64_t{1} << root)) continue;
      std::size_t head = order.size();
      order.push_back(root);
      seen |= uint64_t{1} << root;
      for (; head < order.size(); ++head) {
        const uint64_t nb = lv0.neighbours(uint64_t{1} << order[head]) & ~seen;
        for (uint64_t s = nb; s; s &= s - 1) order.push_back(std::countr_zero(s));
        seen |= nb;
      }
    }
  }
  Network net = net_in;
  for (int i = 0; i < n; ++i) net.inputs[i] = net_in.inputs[order[i]];
  const Leaves lv(net);
  // The connected parts (consecutive in the new numbering), each solved on its own.
  std::vector<uint64_t> parts;
  uint64_t seen = 0;
  for (int i = 0; i < n; ++i) {
    if (seen & (uint64_t{1} << i)) continue;
    uint64_t part = uint64_t{1} << i;
    for (uint64_t grown = lv.neighbours(part); grown; grown = lv.neighbours(part)) part |= grown;
    seen |= part;
    parts.push_back(part);
  }
  Ccp ccp(net, lv, budget);
  Tree t;
  std::vector<std::pair<double, int>> roots;  // (result size, node)
  for (uint64_t part : parts) {
    if (!ccp.solve(part)) return std::nullopt;
    if (!ccp.find(part)) return all_at_once(n);  // the memory limit leaves no path
    const int node = build(t, part, [&](uint64_t s) -> const Entry& { return *ccp.find(s); });
    roots.emplace_back(net.size_of(lv.idx(part)), node);
  }
  // The parts meet in outer products, smallest result first (as opt_einsum).
  std::stable_sort(roots.begin(), roots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  int acc = roots[0].second;
  for (std::size_t i = 1; i < roots.size(); ++i) {
    const uint64_t a = t.nodes[acc].set, b = t.nodes[roots[i].second].set;
    const Join j = pair_cost(lv, a, lv.idx(a), b, lv.idx(b), lv.idx(a | b));
    t.nodes.push_back({a | b, acc, roots[i].second, j.reduce_a, j.reduce_b});
    acc = static_cast<int>(t.nodes.size()) - 1;
  }
  t.root = acc;
  for (Tree::Node& node : t.nodes) {  // back to the caller's numbering
    uint64_t mapped = 0;
    for (uint64_t s = node.set; s; s &= s - 1) mapped |= uint64_t{1} << order[std::countr_zero(s)];
    node.set = mapped;
  }
  return tree_to_path(t, n);
}

}  // namespace bp::ops::einsum
