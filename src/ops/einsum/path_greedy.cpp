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
#include <queue>
#include <unordered_map>
#include <unordered_set>

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

class Greedy {
 public:
  explicit Greedy(const Network& net) : net_(net), dims_(kMaxLabels) {
    LabelSet common = net.inputs[0];
    for (LabelSet s : net.inputs) common &= s;
    output_ = net.output | common;
  }

  std::vector<std::vector<int>> run() {
    const int n = net_.size();
    next_id_ = n;
    for (int i = 0; i < n; ++i) {  // Hadamard products of equal label sets
      const LabelSet key = net_.inputs[i];
      auto it = remaining_.find(key);
      if (it != remaining_.end()) {
        ssa_.push_back({it->second, i});
        it->second = next_id_++;
      } else {
        remaining_.emplace(key, i);
      }
    }
    for (const auto& [key, id] : remaining_) (key - output_).for_each([&](int l) { dims_[l].insert(key); });
    for (int l = 0; l < kMaxLabels; ++l) update_ref_count(l);
    for (int l = 0; l < kMaxLabels; ++l) {
      if (dims_[l].size() < 2) continue;
      std::vector<LabelSet> keys(dims_[l].begin(), dims_[l].end());
      std::sort(keys.begin(), keys.end(), [&](LabelSet a, LabelSet b) { return remaining_[a] < remaining_[b]; });
      for (std::size_t i = 0; i + 1 < keys.size(); ++i)
        push_best(keys[i], std::vector<LabelSet>(keys.begin() + static_cast<long>(i) + 1, keys.end()));
    }
    while (!queue_.empty()) {
      const Candidate c = queue_.top();
      queue_.pop();
      auto i1 = remaining_.find(c.k1), i2 = remaining_.find(c.k2);
      if (i1 == remaining_.end() || i2 == remaining_.end()) continue;  // obsolete
      const int id1 = i1->second, id2 = i2->second;
      remaining_.erase(i1);
      remaining_.erase(remaining_.find(c.k2));
      (c.k1 - output_).for_each([&](int l) { dims_[l].erase(c.k1); });
      (c.k2 - output_).for_each([&](int l) { dims_[l].erase(c.k2); });
      ssa_.push_back({id1, id2});
      const int made = next_id_++;
      auto same = remaining_.find(c.k12);
      if (same != remaining_.end()) {  // equal label sets meet at once
        ssa_.push_back({same->second, made});
        same->second = next_id_++;
      } else {
        (c.k12 - output_).for_each([&](int l) { dims_[l].insert(c.k12); });
        remaining_.emplace(c.k12, made);
      }
      (c.k1 | (c.k2 - output_)).for_each([&](int l) { update_ref_count(l); });
      std::unordered_set<LabelSet, LabelSetHash> partners;
      c.k12.for_each([&](int l) { partners.insert(dims_[l].begin(), dims_[l].end()); });
      partners.erase(c.k12);
      if (!partners.empty()) push_best(c.k12, std::vector<LabelSet>(partners.begin(), partners.end()));
    }
    outer_products();
    return ssa_;
  }

 private:
  void update_ref_count(int l) {
    const std::size_t count = dims_[l].size();
    if (count >= 2) ref2_.add(l); else ref2_.remove(l);
    if (count >= 3) ref3_.add(l); else ref3_.remove(l);
  }

  Candidate candidate(LabelSet k1, LabelSet k2) {
    const LabelSet either = k1 | k2, two = k1 & k2, one = either - two;
    const LabelSet k12 = (either & output_) | (two & ref3_) | (one & ref2_);
    const double cost = net_.size_of(k12) - net_.size_of(k1) - net_.size_of(k2);
    int id1 = remaining_[k1], id2 = remaining_[k2];
    if (id1 > id2) {
      std::swap(k1, k2);
      std::swap(id1, id2);
    }
    return {cost, id2, id1, k1, k2, k12};
  }

  void push_best(LabelSet k1, const std::vector<LabelSet>& k2s) {
    Candidate best = candidate(k1, k2s[0]);
    for (std::size_t i = 1; i < k2s.size(); ++i) {
      Candidate c = candidate(k1, k2s[i]);
      if (best > c) best = c;
    }
    queue_.push(best);
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
    for (const auto& [key, id] : remaining_) q.push({net_.size_of(key & output_), id, key});
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

  const Network& net_;
  LabelSet output_, ref2_, ref3_;
  std::unordered_map<LabelSet, int, LabelSetHash> remaining_;
  std::vector<std::unordered_set<LabelSet, LabelSetHash>> dims_;  // per label: the operands holding it
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue_;
  std::vector<std::vector<int>> ssa_;
  int next_id_ = 0;
};

}  // namespace

Path greedy_path(const Network& net) {
  if (net.limited()) return branch_path(net, 1);
  return ssa_to_linear(Greedy(net).run(), net.size());
}

}  // namespace bp::ops::einsum
