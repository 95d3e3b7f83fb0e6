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
// opt_einsum's growing cost cap approximates with repeated passes. The
// queue's order adds the size of a set's intermediate to its cost (A*):
// whatever joins it later pays at least that, and a join is never cheaper
// than either side's bound, so the first plan off the queue is still the
// cheapest and sets whose intermediates are too big to pay off never come
// off at all.
//
// Note [Capped dp]
// Few plans come off the queue (hundreds to a few thousand at 30
// operands) but each meets every final plan it shares a label with, so
// the joins dominate: they are kept cheap (plans in one array, the queue
// and the per-set table flat, no node per set) and cut by a cap, the cost
// of a known path (greedy's): a plan whose cost plus bound exceeds it can
// never be part of the answer, so it is not queued, and since final plans
// come off in order of that sum, a popped plan stops meeting the final
// plans of an operand at the first whose bound, added to its own cost,
// passes the cap.
class BestFirst {
 public:
  BestFirst(const Network& net, const Leaves& lv, uint64_t part, int64_t budget, int64_t& spent, double cap)
      : net_(net), lv_(lv), part_(part), budget_(budget), spent_(spent), cap_(cap), by_operand_(64) {
    for (uint64_t s = part; s; s &= s - 1) {
      const uint64_t v = s & (~s + 1);
      const LabelSet idx = lv.idx(v);
      push({0, idx, 0, false, false}, v, net.size_of(idx));
    }
  }

  // false when the budget ran out; found() says whether a plan exists.
  bool solve() {
    while (!queue_.empty()) {
      std::pop_heap(queue_.begin(), queue_.end(), std::greater<>());
      const Item top = queue_.back();
      queue_.pop_back();
      const uint64_t set = plans_[top.plan].set;
      Slot& slot = table_.at(set);
      if (slot.final >= 0) continue;  // a cheaper plan came first
      const int at = static_cast<int>(done_.size());
      slot.final = at;
      done_.push_back({top.plan, top.f, set});
      if (set == part_) return true;
      const double own = plans_[top.plan].entry.cost;
      const uint64_t nb = lv_.neighbours(set);
      for (uint64_t vs = nb; vs; vs &= vs - 1) {
        const int v = std::countr_zero(vs);
        for (const Final& other : by_operand_[v]) {
          // Final plans come off in order of their bound: none after this one can pay off.
          if (own + other.f > cap_) break;
          // Each final partner once: through the lowest operand it shares a label with.
          if ((other.set & set) || std::countr_zero(other.set & nb) != v) continue;
          if (budget_ > 0 && ++spent_ > budget_) return false;
          join(top.plan, other.plan);
        }
      }
      for (uint64_t s = set; s; s &= s - 1) by_operand_[std::countr_zero(s)].push_back(done_[at]);
    }
    return true;  // the memory limit (or the cap) left the part without a plan
  }
  bool found() const {
    const Slot* slot = table_.find(part_);
    return slot && slot->final >= 0;
  }
  const Entry& entry(uint64_t set) const { return plans_[done_[table_.find(set)->final].plan].entry; }

 private:
  struct Plan {
    uint64_t set;
    Entry entry;
    double size;  // of its intermediate
  };
  struct Item {
    double f;  // cost plus bound
    int plan;
    bool operator>(const Item& o) const { return f != o.f ? f > o.f : plan > o.plan; }
  };
  // A final plan, with its set at hand: the joins' loop reads every final
  // plan of a neighbour, most of them only to skip it (in place rather than
  // through plans_, 15 % less time on the 12 pieces of Note [Top region
  // dp] in path_auto.cpp).
  struct Final {
    int plan;
    double f;
    uint64_t set;
  };
  struct Slot {
    double best;     // the cheapest plan queued
    int final = -1;  // its entry in done_ once it came off
  };
  // Set -> Slot, open addressing (sets are never removed).
  class Table {
   public:
    Table() : keys_(64, 0), slots_(64) {}
    // The slot of `set`, made (best = +inf) when new.
    Slot& at(uint64_t set) {
      for (std::size_t i = home(set);; i = (i + 1) & (keys_.size() - 1)) {
        if (keys_[i] == set) return slots_[i];
        if (keys_[i] == 0) {
          if (2 * (size_ + 1) > keys_.size()) {
            grow();
            return at(set);
          }
          ++size_;
          keys_[i] = set;
          slots_[i] = {kInf, -1};
          return slots_[i];
        }
      }
    }
    const Slot* find(uint64_t set) const {
      for (std::size_t i = home(set);; i = (i + 1) & (keys_.size() - 1)) {
        if (keys_[i] == set) return &slots_[i];
        if (keys_[i] == 0) return nullptr;
      }
    }

   private:
    std::size_t home(uint64_t set) const { return static_cast<std::size_t>((set * 0x9E3779B97F4A7C15ull) >> 20) & (keys_.size() - 1); }
    void grow() {
      std::vector<uint64_t> keys(2 * keys_.size(), 0);
      std::vector<Slot> slots(keys.size());
      keys.swap(keys_);
      slots.swap(slots_);
      for (std::size_t j = 0; j < keys.size(); ++j) {
        if (keys[j] == 0) continue;
        std::size_t i = home(keys[j]);
        while (keys_[i] != 0) i = (i + 1) & (keys_.size() - 1);
        keys_[i] = keys[j];
        slots_[i] = slots[j];
      }
    }
    std::vector<uint64_t> keys_;  // 0: empty (no set is empty)
    std::vector<Slot> slots_;
    std::size_t size_ = 0;
  };

  void push(const Entry& e, uint64_t set, double size) {
    // Ordered by cost plus a lower bound on what the set still costs: the
    // join that later takes its intermediate costs at least its size.
    const double f = e.cost + (set == part_ ? 0 : size);
    if (f > cap_) return;  // Note [Capped dp]
    Slot& slot = table_.at(set);
    if (e.cost >= slot.best) return;
    slot.best = e.cost;
    plans_.push_back({set, e, size});
    queue_.push_back({f, static_cast<int>(plans_.size()) - 1});
    std::push_heap(queue_.begin(), queue_.end(), std::greater<>());
  }

  // A lone operand that may sum labels of its own first (pair_cost weighs that).
  bool reducible(uint64_t set, LabelSet idx) const {
    return !(set & (set - 1)) && !(net_.inputs[std::countr_zero(set)] == idx);
  }

  void join(int ia, int ib) {
    const Plan& pa = plans_[ia];
    const Plan& pb = plans_[ib];
    const uint64_t a = pa.set, b = pb.set, s = a | b;
    const Entry& ea = pa.entry;
    const Entry& eb = pb.entry;
    // Only a label both sides hold can leave (each side's labels are needed
    // outside it), so the few shared labels decide the result and its size.
    const LabelSet shared = ea.idx & eb.idx;
    const LabelSet removed = shared - lv_.keep(s, shared);
    const LabelSet result = (ea.idx | eb.idx) - removed;
    if (too_big(net_, s, lv_.all(), result)) return;
    const double shared_size = net_.size_of(shared);
    const double size = pa.size * pb.size / (shared_size * net_.size_of(removed));
    Join j;
    if (reducible(a, ea.idx) || reducible(b, eb.idx))
      j = pair_cost(lv_, a, ea.idx, b, eb.idx, result);
    else  // the size of both sides' labels, twice when a label is summed (Note [Einsum cost model])
      j.cost = pa.size * pb.size / shared_size * (removed.empty() ? 1 : 2);
    push({ea.cost + eb.cost + j.cost, result, a, j.reduce_a, j.reduce_b}, s, size);
  }

  const Network& net_;
  const Leaves& lv_;
  uint64_t part_;
  int64_t budget_;
  int64_t& spent_;
  double cap_;
  std::vector<Item> queue_;                  // a heap
  std::vector<Plan> plans_;                  // every plan queued
  Table table_;                              // per set: the best plan queued, and its final entry
  std::vector<Final> done_;                  // final plans, in the order found
  std::vector<std::vector<Final>> by_operand_;  // final plans holding each operand
};

}  // namespace

std::optional<Path> dp_path(const Network& net, int64_t budget, double cap, int64_t* spent_out) {
  const int n = net.size();
  if (n > kMaxSetOperands) return std::nullopt;
  // Any path's cost bounds every part's plan (Note [Capped dp]): the steps
  // of a path within one part are a plan of it, no costlier (the other
  // parts share no label with it but output ones). With a memory limit the
  // known paths may have multi-way steps: no cap.
  if (net.limited()) cap = kInf;
  else if (cap < 0) cap = evaluate(net, greedy_path(net)).opt_cost;
  cap *= 1 + 1e-9;  // sums in another order round differently
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
  int64_t own_spent = 0;
  int64_t& spent = spent_out ? *spent_out : own_spent;
  spent = 0;
  Tree t;
  std::vector<std::pair<double, int>> roots;  // (result size, node)
  for (uint64_t part : parts) {
    for (const double c : {cap, kInf}) {
      BestFirst dp(net, lv, part, budget, spent, c);
      if (!dp.solve()) return std::nullopt;
      if (!dp.found()) {
        if (c < kInf) continue;  // a cap below the optimum (a caller's, not a path's cost): again without
        return over_limit(net);  // the memory limit leaves no pairwise path
      }
      const int node = build(t, part, [&](uint64_t s) -> const Entry& { return dp.entry(s); });
      roots.emplace_back(net.size_of(lv.idx(part)), node);
      break;
    }
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
