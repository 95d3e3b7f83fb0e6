// "optimal" and "dp": dynamic programming over operand sets (paths.h,
// Note [Intermediates of operand sets] in tree.h).

#include <algorithm>
#include <bit>
#include <limits>
#include <queue>
#include <unordered_map>

#include "ops/einsum/paths.h"
#include "ops/einsum/tree.h"

namespace bp::ops::einsum {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// When a memory limit leaves no pairwise path: opt_einsum's optimal search,
// which ends a path with one step over what is left, while that is
// affordable; else every operand in one step.
constexpr int kExhaustiveMaxOperands = 8;
Path over_limit(const Network& net) {
  if (net.size() <= kExhaustiveMaxOperands) return exhaustive_path(net);
  std::vector<int> all(static_cast<std::size_t>(net.size()));
  for (int i = 0; i < net.size(); ++i) all[i] = i;
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
  if (n > kOptimalMaxOperands) return dp_path(net).value_or(over_limit(net));
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
  if (table[all].cost == kInf) return over_limit(net);
  Tree t;
  t.root = build(t, all, [&](uint64_t s) -> const Entry& { return table[s]; });
  return tree_to_path(t, n);
}

namespace {

// Dynamic programming over the connected sets of one connected part, best
// first. A set's cheapest plan joins the cheapest plans of two disjoint
// sets that share a label the output lacks (no outer products inside a
// part: Pfeifer, Haegeman and Verstraete 2014, as opt_einsum's dp). Plans
// come off a queue cheapest first (Knuth's generalisation of Dijkstra's
// algorithm): a join costs at least nothing, so a set's first plan off the
// queue is its cheapest, and the search stops when the whole part comes
// off. Only sets cheaper than the answer are ever made, which is what
// opt_einsum's growing cost cap approximates with repeated passes.
class BestFirst {
 public:
  BestFirst(const Network& net, const Leaves& lv, uint64_t part, int64_t budget, int64_t& spent)
      : net_(net), lv_(lv), part_(part), budget_(budget), spent_(spent), by_operand_(64) {
    for (uint64_t s = part; s; s &= s - 1) {
      const uint64_t v = s & (~s + 1);
      push({0, lv.idx(v), 0, false, false}, v);
    }
  }

  // false when the budget ran out; found() says whether a plan exists.
  bool solve() {
    while (!queue_.empty()) {
      const Item top = queue_.top();
      queue_.pop();
      if (final_.count(top.set)) continue;  // a cheaper plan came first
      const std::size_t at = done_.size();
      final_.emplace(top.set, at);
      done_.push_back({top.set, top.entry});
      if (top.set == part_) return true;
      const uint64_t nb = lv_.neighbours(top.set);
      for (uint64_t vs = nb; vs; vs &= vs - 1) {
        const int v = std::countr_zero(vs);
        for (std::size_t other : by_operand_[v]) {
          const uint64_t t = done_[other].first;
          // Each final partner once: through the lowest operand it shares a label with.
          if ((t & top.set) || std::countr_zero(t & nb) != v) continue;
          if (budget_ > 0 && ++spent_ > budget_) return false;
          join(at, other);
        }
      }
      for (uint64_t s = top.set; s; s &= s - 1) by_operand_[std::countr_zero(s)].push_back(at);
    }
    return true;  // the memory limit left the part without a plan
  }
  bool found() const { return final_.count(part_) != 0; }
  const Entry& entry(uint64_t set) const { return done_[final_.at(set)].second; }

 private:
  struct Item {
    double cost;
    uint64_t set;
    Entry entry;
    bool operator>(const Item& o) const { return cost > o.cost; }
  };

  void push(const Entry& e, uint64_t set) {
    auto [it, fresh] = best_.emplace(set, e.cost);
    if (!fresh) {
      if (e.cost >= it->second) return;
      it->second = e.cost;
    }
    queue_.push({e.cost, set, e});
  }

  void join(std::size_t ia, std::size_t ib) {
    const uint64_t a = done_[ia].first, b = done_[ib].first, s = a | b;
    const Entry& ea = done_[ia].second;
    const Entry& eb = done_[ib].second;
    const LabelSet result = lv_.keep(s, ea.idx | eb.idx);
    if (too_big(net_, s, lv_.all(), result)) return;
    const Join j = pair_cost(lv_, a, ea.idx, b, eb.idx, result);
    push({ea.cost + eb.cost + j.cost, result, a, j.reduce_a, j.reduce_b}, s);
  }

  const Network& net_;
  const Leaves& lv_;
  uint64_t part_;
  int64_t budget_;
  int64_t& spent_;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue_;
  std::unordered_map<uint64_t, double> best_;          // the cheapest plan queued per set
  std::vector<std::pair<uint64_t, Entry>> done_;       // final plans, in the order found
  std::unordered_map<uint64_t, std::size_t> final_;    // set -> its final plan
  std::vector<std::vector<std::size_t>> by_operand_;   // final plans holding each operand
};

}  // namespace

std::optional<Path> dp_path(const Network& net, int64_t budget) {
  const int n = net.size();
  if (n > kMaxSetOperands) return std::nullopt;
  const Leaves lv(net);
  // The connected parts (joined by labels the output lacks), each solved on its own.
  std::vector<uint64_t> parts;
  uint64_t seen = 0;
  for (int i = 0; i < n; ++i) {
    if (seen & (uint64_t{1} << i)) continue;
    uint64_t part = uint64_t{1} << i;
    for (uint64_t grown = lv.neighbours(part); grown; grown = lv.neighbours(part)) part |= grown;
    seen |= part;
    parts.push_back(part);
  }
  int64_t spent = 0;
  Tree t;
  std::vector<std::pair<double, int>> roots;  // (result size, node)
  for (uint64_t part : parts) {
    BestFirst dp(net, lv, part, budget, spent);
    if (!dp.solve()) return std::nullopt;
    if (!dp.found()) return over_limit(net);  // the memory limit leaves no pairwise path
    const int node = build(t, part, [&](uint64_t s) -> const Entry& { return dp.entry(s); });
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
  return tree_to_path(t, n);
}

}  // namespace bp::ops::einsum
