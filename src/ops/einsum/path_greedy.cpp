// "greedy": opt_einsum's greedy optimiser, rewritten for label masks
// (paths.h). Three stages: operands with equal label sets are multiplied
// first (Hadamard products); then, among operands that share a label,
// the pair whose result frees the most memory (size(result) - size(a) -
// size(b), smallest first; ties to the pair with the older operands) until
// no such pair is left; then what remains meets in outer products,
// smallest first. A label every operand has is treated as an output
// label, since it cannot be summed before the last step. Each operand
// keeps only its best candidate in the queue, and a candidate whose
// operands have gone is dropped when it comes up, as in opt_einsum, so
// the two choose the same pairs. With a memory limit it is branch-1, as
// opt_einsum's greedy is.

#include <algorithm>
#include <array>
#include <memory>
#include <queue>
#include <cstdint>

#include "ops/einsum/paths.h"
#include "ops/einsum/tree.h"

namespace bp::ops::einsum {
namespace {

struct Candidate {
  double cost;
  int id2, id1;  // id1 < id2 when made
  LabelSet k1, k2, k12;
  // The queue's order: cheapest first, then by ids.
  bool operator>(const Candidate& o) const {
    if (cost != o.cost) return cost > o.cost;
    if (id2 != o.id2) return id2 > o.id2;
    return id1 > o.id1;
  }
};

// The operands left, by label set (at most one per set: equal sets are
// multiplied at once), in an open-addressing table: the search does a few
// lookups per step and allocating a node per operand would cost more.
class Remaining {
 public:
  explicit Remaining(std::size_t most) {
    std::size_t cap = 16;
    while (cap < 4 * most) cap *= 2;
    keys_.resize(cap);
    ids_.assign(cap, kEmpty);
  }
  // The operand id holding `key`, or -1.
  int find(LabelSet key) const {
    for (std::size_t i = home(key);; i = (i + 1) & (keys_.size() - 1)) {
      if (ids_[i] == kEmpty) return -1;
      if (ids_[i] >= 0 && keys_[i] == key) return ids_[i];
    }
  }
  void set(LabelSet key, int id) {  // insert or overwrite
    std::size_t free = SIZE_MAX;
    for (std::size_t i = home(key);; i = (i + 1) & (keys_.size() - 1)) {
      if (ids_[i] == kEmpty) {
        const std::size_t at = free != SIZE_MAX ? free : i;
        keys_[at] = key, ids_[at] = id;
        ++size_;
        return;
      }
      if (ids_[i] == kGone && free == SIZE_MAX) free = i;
      if (ids_[i] >= 0 && keys_[i] == key) {
        ids_[i] = id;
        return;
      }
    }
  }
  void erase(LabelSet key) {
    for (std::size_t i = home(key);; i = (i + 1) & (keys_.size() - 1)) {
      if (ids_[i] == kEmpty) return;
      if (ids_[i] >= 0 && keys_[i] == key) {
        ids_[i] = kGone;
        --size_;
        return;
      }
    }
  }
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (ids_[i] >= 0) fn(keys_[i], ids_[i]);
  }

 private:
  static constexpr int kEmpty = -1, kGone = -2;
  std::size_t home(LabelSet key) const { return LabelSetHash{}(key) & (keys_.size() - 1); }
  std::vector<LabelSet> keys_;
  std::vector<int> ids_;
  std::size_t size_ = 0;
};

// The per-label operand lists and the candidate heap, kept per thread and
// cleared per search: allocating 128 label lists and a heap on every call was
// a third of a greedy search over 8 operands (a path is searched on every
// uncached einsum call and every contract_path).
struct GreedyScratch {
  std::vector<std::vector<LabelSet>> dims = std::vector<std::vector<LabelSet>>(kMaxLabels);
  std::vector<Candidate> queue;
  bool busy = false;  // a search on this thread holds it (a nested one gets its own)
};

class Greedy {
 public:
  explicit Greedy(const Network& net)
      : net_(net), remaining_(2 * net.inputs.size() + 1), scratch_(claim_scratch(own_)), dims_(scratch_.dims),
        queue_(scratch_.queue) {
    LabelSet common = net.inputs[0];
    for (LabelSet s : net.inputs) common &= s;
    output_ = net.output | common;
    // Only this network's labels are ever read: the others may keep what
    // an earlier search left (clearing all 128 lists was a tenth of a search).
    for (LabelSet s : net.inputs) labels_ |= s;
    labels_.for_each([&](int l) { dims_[l].clear(); });
    queue_.clear();
    queue_.reserve(4 * net.inputs.size());
    ssa_.reserve(net.inputs.size());
  }
  ~Greedy() { scratch_.busy = false; }
  Greedy(const Greedy&) = delete;
  Greedy& operator=(const Greedy&) = delete;

  std::vector<std::array<int, 2>> run() {
    const int n = net_.size();
    next_id_ = n;
    for (int i = 0; i < n; ++i) {  // Hadamard products of equal label sets
      const LabelSet key = net_.inputs[i];
      const int have = remaining_.find(key);
      if (have >= 0) {
        ssa_.push_back({have, i});
        remaining_.set(key, next_id_++);
      } else {
        remaining_.set(key, i);
      }
    }
    remaining_.for_each([&](LabelSet key, int) { (key - output_).for_each([&](int l) { dims_[l].push_back(key); }); });
    labels_.for_each([&](int l) { update_ref_count(l); });
    labels_.for_each([&](int l) {
      std::vector<LabelSet>& keys = dims_[l];
      if (keys.size() < 2) return;
      std::vector<LabelSet> sorted = keys;
      std::sort(sorted.begin(), sorted.end(),
                [&](LabelSet a, LabelSet b) { return remaining_.find(a) < remaining_.find(b); });
      for (std::size_t i = 0; i + 1 < sorted.size(); ++i)
        push_best(sorted[i], sorted.data() + i + 1, sorted.size() - i - 1);
    });
    std::vector<LabelSet> partners;
    while (!queue_.empty()) {
      std::pop_heap(queue_.begin(), queue_.end(), std::greater<>());
      const Candidate c = queue_.back();
      queue_.pop_back();
      const int id1 = remaining_.find(c.k1), id2 = remaining_.find(c.k2);
      if (id1 < 0 || id2 < 0) continue;  // obsolete
      remaining_.erase(c.k1);
      remaining_.erase(c.k2);
      (c.k1 - output_).for_each([&](int l) { drop(l, c.k1); });
      (c.k2 - output_).for_each([&](int l) { drop(l, c.k2); });
      ssa_.push_back({id1, id2});
      const int made = next_id_++;
      const int same = remaining_.find(c.k12);
      if (same >= 0) {  // equal label sets meet at once
        ssa_.push_back({same, made});
        remaining_.set(c.k12, next_id_++);
      } else {
        (c.k12 - output_).for_each([&](int l) { dims_[l].push_back(c.k12); });
        remaining_.set(c.k12, made);
      }
      (c.k1 | (c.k2 - output_)).for_each([&](int l) { update_ref_count(l); });
      partners.clear();
      c.k12.for_each([&](int l) {
        for (LabelSet k : dims_[l])
          if (!(k == c.k12) && std::find(partners.begin(), partners.end(), k) == partners.end()) partners.push_back(k);
      });
      if (!partners.empty()) push_best(c.k12, partners.data(), partners.size());
    }
    outer_products();
    return ssa_;
  }

 private:
  void drop(int l, LabelSet key) {
    std::vector<LabelSet>& keys = dims_[l];
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it != keys.end()) {
      *it = keys.back();
      keys.pop_back();
    }
  }

  void update_ref_count(int l) {
    const std::size_t count = dims_[l].size();
    if (count >= 2) ref2_.add(l); else ref2_.remove(l);
    if (count >= 3) ref3_.add(l); else ref3_.remove(l);
  }

  Candidate candidate(LabelSet k1, LabelSet k2) const {
    const LabelSet either = k1 | k2, two = k1 & k2, one = either - two;
    const LabelSet k12 = (either & output_) | (two & ref3_) | (one & ref2_);
    const double cost = net_.size_of(k12) - net_.size_of(k1) - net_.size_of(k2);
    int id1 = remaining_.find(k1), id2 = remaining_.find(k2);
    if (id1 > id2) {
      std::swap(k1, k2);
      std::swap(id1, id2);
    }
    return {cost, id2, id1, k1, k2, k12};
  }

  void push_best(LabelSet k1, const LabelSet* k2s, std::size_t count) {
    Candidate best = candidate(k1, k2s[0]);
    for (std::size_t i = 1; i < count; ++i) {
      Candidate c = candidate(k1, k2s[i]);
      if (best > c) best = c;
    }
    queue_.push_back(best);
    std::push_heap(queue_.begin(), queue_.end(), std::greater<>());
  }

  // What is left shares no label but output ones: outer products, smallest first.
  void outer_products() {
    struct Item {
      double size;
      int id;
      LabelSet key;
      bool operator>(const Item& o) const { return size != o.size ? size > o.size : id > o.id; }
    };
    std::priority_queue<Item, std::vector<Item>, std::greater<>> q;
    remaining_.for_each([&](LabelSet key, int id) { q.push({net_.size_of(key & output_), id, key}); });
    Item a = q.top();
    q.pop();
    while (!q.empty()) {
      const Item b = q.top();
      q.pop();
      ssa_.push_back({std::min(a.id, b.id), std::max(a.id, b.id)});
      const LabelSet k12 = (a.key | b.key) & output_;
      q.push({net_.size_of(k12), next_id_++, k12});
      a = q.top();
      q.pop();
    }
  }

  // This thread's scratch, or `own` (allocated here) when a search on this
  // thread already holds it.
  static GreedyScratch& claim_scratch(std::unique_ptr<GreedyScratch>& own) {
    thread_local GreedyScratch shared;
    GreedyScratch& s = shared.busy ? *(own = std::make_unique<GreedyScratch>()) : shared;
    s.busy = true;
    return s;
  }

  const Network& net_;
  LabelSet output_, ref2_, ref3_, labels_;
  Remaining remaining_;
  std::unique_ptr<GreedyScratch> own_;  // declared before scratch_, which may refer to it
  GreedyScratch& scratch_;
  std::vector<std::vector<LabelSet>>& dims_;  // per label: the operands holding it (their label sets)
  std::vector<Candidate>& queue_;             // a heap
  std::vector<std::array<int, 2>> ssa_;  // every step joins two
  int next_id_ = 0;
};

// ssa_to_linear for steps of two (tree.h), without a vector per step.
Path pairs_to_linear(const std::vector<std::array<int, 2>>& ssa, int operands) {
  std::vector<int> alive(static_cast<std::size_t>(operands));
  for (int i = 0; i < operands; ++i) alive[i] = i;
  int next = operands;
  Path path;
  path.reserve(ssa.size());
  for (const auto& step : ssa) {
    std::vector<int>& positions = path.emplace_back(2);
    for (int j = 0; j < 2; ++j)
      positions[j] = static_cast<int>(std::lower_bound(alive.begin(), alive.end(), step[j]) - alive.begin());
    for (int id : step) alive.erase(std::lower_bound(alive.begin(), alive.end(), id));
    alive.push_back(next++);  // new ids are the largest: the list stays sorted
  }
  return path;
}

}  // namespace

Path greedy_path(const Network& net) {
  if (net.limited()) return branch_path(net, 1);
  return pairs_to_linear(Greedy(net).run(), net.size());
}

}  // namespace bp::ops::einsum
