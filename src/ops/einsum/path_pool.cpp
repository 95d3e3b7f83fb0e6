// The pool of sets and the cut trees "auto" fills it with (path_pool.h,
// Notes [Pooled trees] and [Cut trees]).

#include "ops/einsum/path_pool.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>

namespace bp::ops::einsum {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kGumbelBits = 12;
// Parts of fewer operands are not refined (Note [Cut trees]).
constexpr int kRefineMin = 8;
// A refining pass stops after this many moves in a row that found no smaller cut.
constexpr int kPatience = 4;

// Note [Subset index]: over a list of operand sets, per 64 entries and
// per operand, the entries lacking that operand.
class LackIndex {
 public:
  template <class SetOf>
  LackIndex(std::size_t count, int n, SetOf set_of)
      : n_(static_cast<std::size_t>(n)), lacks_((count + 63) / 64 * n_, ~uint64_t{0}) {
    for (std::size_t p = 0; p < count; ++p)
      for (uint64_t r = set_of(p); r; r &= r - 1)
        lacks_[(p >> 6) * n_ + static_cast<std::size_t>(std::countr_zero(r))] &= ~(uint64_t{1} << (p & 63));
  }
  // Calls visit(p) for each p in [begin, end), in order, whose set holds
  // no operand of `avoid`.
  template <class Visit>
  void for_each(std::size_t begin, std::size_t end, uint64_t avoid, Visit visit) const {
    if (end <= begin) return;
    const std::size_t last = (end - 1) >> 6;
    for (std::size_t w = begin >> 6; w <= last; ++w) {
      uint64_t m = ~uint64_t{0};
      if (w == begin >> 6) m &= ~uint64_t{0} << (begin & 63);
      if (w == last) m &= ~uint64_t{0} >> (63 - ((end - 1) & 63));
      const uint64_t* lack = &lacks_[w * n_];
      for (uint64_t r = avoid; r && m; r &= r - 1) m &= lack[std::countr_zero(r)];
      for (; m; m &= m - 1) visit(w * 64 + static_cast<std::size_t>(std::countr_zero(m)));
    }
  }

  // Whether any p in [begin, end) has a set holding no operand of `avoid`.
  bool any(std::size_t begin, std::size_t end, uint64_t avoid) const {
    bool found = false;
    for (std::size_t w = begin >> 6; !found && end > begin && w <= (end - 1) >> 6; ++w) {
      uint64_t m = ~uint64_t{0};
      if (w == begin >> 6) m &= ~uint64_t{0} << (begin & 63);
      if (w == (end - 1) >> 6) m &= ~uint64_t{0} >> (63 - ((end - 1) & 63));
      const uint64_t* lack = &lacks_[w * n_];
      for (uint64_t r = avoid; r && m; r &= r - 1) m &= lack[std::countr_zero(r)];
      found = m != 0;
    }
    return found;
  }

 private:
  std::size_t n_;
  std::vector<uint64_t> lacks_;
};

// A one-hash Bloom filter of the pool's sets, 16 bits a set: most sets
// solve() looks up are not in the pool, and this answers those from L1
// where the hash table would probe.
class Filter {
 public:
  explicit Filter(std::size_t count) {
    while ((std::size_t{1} << shift_) < 16 * count) ++shift_;
    bits_.assign(((std::size_t{1} << shift_) + 63) / 64, 0);
  }
  void put(uint64_t set) {
    const std::size_t h = hash(set);
    bits_[h >> 6] |= uint64_t{1} << (h & 63);
  }
  bool may_have(uint64_t set) const {
    const std::size_t h = hash(set);
    return (bits_[h >> 6] >> (h & 63)) & 1;
  }

 private:
  std::size_t hash(uint64_t set) const { return static_cast<std::size_t>((set * 0xD6E8FEB86659FD93ull) >> (64 - shift_)); }
  int shift_ = 6;
  std::vector<uint64_t> bits_;
};

}  // namespace

double Draws::gumbel() {
  static const std::vector<float> table = [] {
    constexpr int n = 1 << kGumbelBits;
    std::vector<float> t(n);
    for (int i = 0; i < n; ++i) t[i] = static_cast<float>(-std::log(-std::log((i + 0.5) / n)));
    return t;
  }();
  return table[next() >> (64 - kGumbelBits)];
}

// ---------------------------------------------------------------- the pool

SetPool::SetPool(const Leaves& lv) : lv_(lv) {
  for (int i = 0; i < lv.net().size(); ++i) put(uint64_t{1} << i, lv.idx(uint64_t{1} << i));
}

void SetPool::add(uint64_t set, uint64_t a) {
  if (find(set) >= 0) return;
  const int left = find(a), right = find(set ^ a);
  // Only the parts' labels can be in the set's intermediate: fewer to look
  // at than all of its operands' (Note [Intermediates of operand sets]).
  put(set, left >= 0 && right >= 0 ? lv_.keep(set, idx_[left] | idx_[right]) : lv_.idx(set));
}

void SetPool::add_tree(const Tree& t) {
  // Children first. Re-planning appends the nodes it makes, so a node's
  // children may come after it in t.nodes.
  std::function<void(int)> visit = [&](int v) {
    const Tree::Node& node = t.nodes[v];
    if (node.left < 0 || find(node.set) >= 0) return;
    visit(node.left);
    visit(node.right);
    add(node.set, t.nodes[node.left].set);
  };
  for (std::size_t v = 0; v < t.nodes.size(); ++v) visit(static_cast<int>(v));
}

bool SetPool::solve(Tree& out, double& cost, bool outside, double bound) {
  const int n = lv_.net().size();
  const std::size_t count = sets_.size();
  // The pool by size (a counting sort), then by lowest operand: the part of
  // a split holding a set's lowest operand has the same lowest operand, and
  // is smaller.
  std::vector<int> ones(count), order(count), start(static_cast<std::size_t>(n) + 2, 0);
  for (std::size_t i = 0; i < count; ++i) ++start[(ones[i] = std::popcount(sets_[i])) + 1];
  for (int k = 1; k <= n + 1; ++k) start[k] += start[k - 1];
  for (std::size_t i = 0; i < count; ++i) order[start[ones[i]]++] = static_cast<int>(i);
  struct Candidate {
    uint64_t set;
    int ones, at;
  };
  std::vector<Candidate> by_low(count);
  std::vector<int> low_start(static_cast<std::size_t>(n) + 1, 0);
  for (std::size_t i = 0; i < count; ++i) ++low_start[std::countr_zero(sets_[i]) + 1];
  for (int k = 1; k <= n; ++k) low_start[k] += low_start[k - 1];
  std::vector<int> fill(low_start.begin(), low_start.end() - 1);
  for (int i : order) by_low[fill[std::countr_zero(sets_[i])]++] = {sets_[i], ones[i], i};
  // Note [Subset index].
  const LackIndex subsets(count, n, [&](std::size_t p) { return by_low[p].set; });
  Filter filter(count);
  for (uint64_t set : sets_) filter.put(set);
  // Note [Incremental solve]: a set none of whose subsets came since the
  // last solve keeps that solve's plan (and, with `outside`, its splits).
  const bool again = solved_ > 0 && bound <= solved_bound_ && (!outside || solved_outside_);
  std::vector<uint8_t> fresh(count, 1);
  if (again) {
    const std::size_t added = count - solved_;
    const LackIndex news(added, n, [&](std::size_t p) { return sets_[solved_ + p]; });
    for (std::size_t i = 0; i < solved_; ++i) fresh[i] = news.any(0, added, lv_.all() & ~sets_[i]);
  }
  std::vector<double>& best = best_;
  if (again) {
    best.resize(count, kInf);
    for (std::size_t i = 0; i < count; ++i)
      if (fresh[i] || best[i] >= bound) best[i] = fresh[i] ? bound : kInf;
  } else {
    best.assign(count, bound);  // Note [Bounded solve]: plans costing at least `bound` are none
  }
  split_.resize(count, -1);
  reduce_.resize(count, 0);
  // The splits of the sets kept, then those found now: both by set size.
  std::vector<Split> kept;
  if (outside) {
    if (again)
      for (const Split& sp : splits_)
        if (!fresh[sp.set]) kept.push_back(sp);
    splits_.clear();
  }
  out_.clear();  // no completions until an outside solve finds a tree
  const Network& net = lv_.net();
  // A lone operand that may sum labels of its own first (pair_cost weighs that).
  auto reducible = [&](int i) { return ones[i] == 1 && !(net.inputs[std::countr_zero(sets_[i])] == idx_[i]); };
  auto join_cost = [&](int i, int a, int b) {
    Join j;
    if (reducible(a) || reducible(b)) {
      j = pair_cost(lv_, sets_[a], idx_[a], sets_[b], idx_[b], idx_[i]);
    } else {  // both sides' labels, twice when one is summed (Note [Einsum cost model])
      const LabelSet shared = idx_[a] & idx_[b];
      j.cost = size_[a] * size_[b] / net.size_of(shared) * ((idx_[a] | idx_[b]) == idx_[i] ? 1 : 2);
    }
    return j;
  };
  for (int i : order) {
    if (!fresh[i]) continue;
    const uint64_t s = sets_[i];
    if (ones[i] == 1) {
      best[i] = 0;
      continue;
    }
    split_[i] = -1;
    const int low = std::countr_zero(s);
    // The candidates: by_low[begin, end), then only those that are subsets
    // of s, found a block of 64 at a time (Note [Subset index]).
    const int begin = low_start[low];
    const int end = static_cast<int>(
        std::partition_point(by_low.begin() + begin, by_low.begin() + low_start[low + 1],
                             [&](const Candidate& c) { return c.ones < ones[i]; }) -
        by_low.begin());
    subsets.for_each(static_cast<std::size_t>(begin), static_cast<std::size_t>(end), lv_.all() & ~s, [&](std::size_t p) {
      const Candidate& c = by_low[p];
      const int a = c.at;
      if (best[a] >= (outside ? bound : best[i])) return;  // a join costs at least nothing
      if (!filter.may_have(s ^ c.set)) return;
      const int b = find(s ^ c.set);
      if (b < 0) return;
      const double both = best[a] + best[b];
      if (both >= (outside ? bound : best[i])) return;
      const Join j = join_cost(i, a, b);
      if (outside) splits_.push_back({i, a, b, j.cost});
      if (both + j.cost < best[i]) {
        best[i] = both + j.cost;
        split_[i] = a;
        reduce_[i] = static_cast<uint8_t>(j.reduce_a | (j.reduce_b << 1));
      }
    });
  }
  for (int i : order)
    if (best[i] >= bound) best[i] = kInf;
  solved_ = count;
  solved_bound_ = bound;
  solved_outside_ = outside;
  const int root = find(lv_.all());
  if (root < 0 || best[root] == kInf) return false;
  if (outside) {
    if (!kept.empty()) {
      std::vector<Split> found;
      found.swap(splits_);
      splits_.resize(kept.size() + found.size());
      std::merge(kept.begin(), kept.end(), found.begin(), found.end(), splits_.begin(),
                 [&](const Split& x, const Split& y) { return ones[x.set] < ones[y.set]; });
    }
    // Note [Pool unions]: the cheapest completion of each set into a tree
    // of the whole network, parents before their parts.
    out_.assign(count, kInf);
    out_[root] = 0;
    for (auto it = splits_.rbegin(); it != splits_.rend(); ++it) {
      const double above = out_[it->set];
      if (above == kInf) continue;
      out_[it->a] = std::min(out_[it->a], above + best[it->b] + it->cost);
      out_[it->b] = std::min(out_[it->b], above + best[it->a] + it->cost);
    }
  }
  out.nodes.clear();
  std::function<int(int)> make = [&](int i) -> int {
    const uint64_t s = sets_[i];
    if (ones[i] == 1) {
      out.nodes.push_back({s, -1, -1, false, false});
    } else {
      const int l = make(split_[i]), r = make(find(s ^ sets_[split_[i]]));
      out.nodes.push_back({s, l, r, (reduce_[i] & 1) != 0, (reduce_[i] & 2) != 0});
    }
    return static_cast<int>(out.nodes.size()) - 1;
  };
  out.root = make(root);
  cost = best[root];
  return true;
}

std::size_t SetPool::add_unions(double cap, double reach, std::size_t most, std::size_t chains) {
  const std::size_t count = sets_.size();
  // The sets on pool trees within `reach` of the cheapest, best placed first.
  struct Scored {
    double score;
    int at;
  };
  std::vector<Scored> good;
  for (std::size_t i = 0; i < count; ++i) {
    if (i >= out_.size()) break;
    if (sets_[i] == lv_.all()) continue;
    const double score = best_[i] + out_[i];  // inf without a plan or a completion
    if (score <= reach * cap) good.push_back({score, static_cast<int>(i)});
  }
  std::stable_sort(good.begin(), good.end(), [](const Scored& x, const Scored& y) { return x.score < y.score; });
  const Network& net = lv_.net();
  // Adds a | b (a with plan cost plan_a) unless its plans, join or
  // intermediate come to cap; the union's plan cost, or inf.
  auto unite = [&](int i, double plan_a, int j) {
    const uint64_t a = sets_[i], b = sets_[j];
    const double both = plan_a + best_[j];
    // The join costs at least the size of both sides' labels (Note [Einsum
    // cost model]): bounds that need no labels of the union.
    if (both + std::max(size_[i], size_[j]) >= cap) return kInf;
    if (both + size_[i] * size_[j] / net.size_of(idx_[i] & idx_[j]) >= cap || find(a | b) >= 0) return kInf;
    const LabelSet idx = lv_.keep(a | b, idx_[i] | idx_[j]);
    const double size = (a | b) == lv_.all() ? 0 : net.size_of(idx);
    if (both + size >= cap) return kInf;
    const Join jn = pair_cost(lv_, a, idx_[i], b, idx_[j], idx);
    if (both + size + jn.cost >= cap) return kInf;
    add(a | b, a);
    return both + jn.cost;
  };
  // Pairs in order of the later one's score: the first `most` unions are
  // those of the best-placed sets. Note [Subset index]: only the earlier
  // sets disjoint from each are looked at.
  const LackIndex disjoint(good.size(), net.size(), [&](std::size_t p) { return sets_[good[p].at]; });
  std::vector<Scored> made;  // the unions added, with their plan cost
  for (std::size_t y = 1; y < good.size() && made.size() < most; ++y) {
    const int j = good[y].at;
    const uint64_t near = lv_.neighbours(sets_[j]);
    disjoint.for_each(0, y, sets_[j], [&](std::size_t x) {
      const int i = good[x].at;
      if (made.size() >= most || !(near & sets_[i])) return;
      const double plan = unite(i, best_[i], j);
      if (plan < kInf) made.push_back({plan, static_cast<int>(sets_.size()) - 1});
    });
  }
  // Then chains (Note [Pool unions]): each union joined with good sets,
  // in the order made, up to `chains` of them.
  std::size_t chained = 0;
  for (std::size_t u = 0; u < made.size() && chained < chains; ++u) {
    const int k = made[u].at;
    const uint64_t near = lv_.neighbours(sets_[k]);
    disjoint.for_each(0, good.size(), sets_[k], [&](std::size_t x) {
      const int j = good[x].at;
      if (chained >= chains || !(near & sets_[j])) return;
      if (unite(k, made[u].score, j) < kInf) ++chained;
    });
  }
  return made.size() + chained;
}

double SetPool::cheapest_through(uint64_t set) const {
  const int i = find(set);
  return i >= 0 && static_cast<std::size_t>(i) < out_.size() ? best_[i] + out_[i] : kInf;
}

void SetPool::put(uint64_t set, LabelSet idx) {
  if (2 * (sets_.size() + 1) > keys_.size()) grow();
  insert(set, static_cast<int>(sets_.size()));
  sets_.push_back(set);
  idx_.push_back(idx);
  size_.push_back(lv_.net().size_of(idx));
}

std::size_t SetPool::home(uint64_t set) const {
  return static_cast<std::size_t>((set * 0x9E3779B97F4A7C15ull) >> 20) & (keys_.size() - 1);
}

int SetPool::find(uint64_t set) const {
  if (keys_.empty()) return -1;
  for (std::size_t i = home(set);; i = (i + 1) & (keys_.size() - 1)) {
    if (keys_[i] == set) return where_[i];
    if (keys_[i] == 0) return -1;
  }
}

void SetPool::insert(uint64_t set, int at) {
  std::size_t i = home(set);
  while (keys_[i] != 0) i = (i + 1) & (keys_.size() - 1);
  keys_[i] = set;
  where_[i] = at;
}

void SetPool::grow() {
  keys_.assign(keys_.empty() ? 1024 : 2 * keys_.size(), 0);
  where_.assign(keys_.size(), -1);
  for (std::size_t i = 0; i < sets_.size(); ++i) insert(sets_[i], static_cast<int>(i));
}

// ---------------------------------------------------------------- cut trees

CutTrees::CutTrees(const Leaves& lv) : lv_(lv) {
  const Network& net = lv.net();
  edges_.resize(static_cast<std::size_t>(net.size()));
  for (std::size_t l = 0; l < net.sizes.size(); ++l) {
    const uint64_t h = lv.holders(static_cast<int>(l));
    // A label on one operand, or one the output keeps, is in no cut.
    if (net.output.has(static_cast<int>(l)) || !(h & (h - 1))) continue;
    const Label label{h, std::log(net.sizes[l])};
    labels_.push_back(label);
    for (uint64_t r = h; r; r &= r - 1) {
      const int v = std::countr_zero(r);
      edges_[v].push_back(label);
      adjacent_[v] |= h & ~(uint64_t{1} << v);
    }
  }
}

void CutTrees::add_tree(SetPool& pool, Draws& rng, double imbalance) {
  rng_ = &rng;
  imbalance_ = imbalance;
  split(pool, lv_.all());
}

// Cuts s and its parts, then adds s to the pool (its parts are there by then).
void CutTrees::split(SetPool& pool, uint64_t s) {
  const int count = std::popcount(s);
  if (count < 2) return;
  const uint64_t a = count == 2 ? s & (~s + 1) : cut(s);
  split(pool, a);
  split(pool, s ^ a);
  pool.add(s, a);
}

// How much the cut of s into a and s - a shrinks when operand v changes sides.
double CutTrees::gain(int v, uint64_t a, uint64_t s) const {
  const uint64_t moved = a ^ (uint64_t{1} << v);
  double g = 0;
  for (const Label& l : edges_[v]) {
    const uint64_t h = l.holders & s;
    g += l.weight * (static_cast<int>((h & a) && (h & ~a)) - static_cast<int>((h & moved) && (h & ~moved)));
  }
  return g;
}

// The weight of the cut of s into a and s - a.
double CutTrees::weight(uint64_t a, uint64_t s) const {
  double w = 0;
  for (const Label& l : labels_) {
    const uint64_t h = l.holders & s;
    if ((h & a) && (h & ~a)) w += l.weight;
  }
  return w;
}

uint64_t CutTrees::cut(uint64_t s) {
  const int count = std::popcount(s);
  const int lo = std::max(1, static_cast<int>(count * (1 - imbalance_) / 2)), hi = count - lo;
  // A part grown from a random operand to a random size within the
  // balance, a random neighbour at a time (so it starts connected).
  const int target = lo + static_cast<int>(((rng_->next() >> 32) * static_cast<uint64_t>(hi - lo + 1)) >> 32);
  uint64_t a = pick(s), reach = adjacent_[std::countr_zero(a)];
  for (int size = 1; size < target; ++size) {
    const uint64_t frontier = reach & s & ~a;
    const uint64_t v = pick(frontier ? frontier : s & ~a);
    a |= v;
    reach |= adjacent_[std::countr_zero(v)];
  }
  if (count < kRefineMin) return a;
  // One Fiduccia-Mattheyses pass: move the operand of best gain that keeps
  // the balance, each once, and keep the least cut on the way.
  double g[kMaxSetOperands];
  for (uint64_t r = s; r; r &= r - 1) g[std::countr_zero(r)] = gain(std::countr_zero(r), a, s);
  double w = weight(a, s), least = w;
  uint64_t cur = a, locked = 0;
  int in_a = std::popcount(a);
  for (int step = 0, since = 0; step < count && since < kPatience; ++step) {
    int v = -1;
    for (uint64_t r = s & ~locked; r; r &= r - 1) {
      const int u = std::countr_zero(r);
      if ((cur >> u & 1) ? in_a - 1 < lo : in_a + 1 > hi) continue;
      if (v < 0 || g[u] > g[v]) v = u;
    }
    if (v < 0) break;
    w -= g[v];
    in_a += (cur >> v & 1) ? -1 : 1;
    cur ^= uint64_t{1} << v;
    locked |= uint64_t{1} << v;
    if (w < least - 1e-9) {
      least = w, a = cur, since = 0;
    } else {
      ++since;
    }
    // Only the gains of operands sharing a label with v change.
    for (uint64_t r = adjacent_[v] & s & ~locked; r; r &= r - 1) g[std::countr_zero(r)] = gain(std::countr_zero(r), cur, s);
  }
  return a;
}

// A random operand of `from` (not empty).
uint64_t CutTrees::pick(uint64_t from) {
  // The top 32 bits of a draw times the count, over 2^32: no division.
  int k = static_cast<int>(((rng_->next() >> 32) * static_cast<uint64_t>(std::popcount(from))) >> 32);
  while (k-- > 0) from &= from - 1;
  return from & (~from + 1);
}

}  // namespace bp::ops::einsum
