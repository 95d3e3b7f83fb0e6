#pragma once
// What "auto" draws its starting tree from beyond dp's reach
// (path_auto.cpp): seeded random draws, trees cut top-down at balanced
// cuts, and the pool of sets that recombines the trees it was given.
//
// Note [Pooled trees]
// Sampled greedy paths differ from dp's all through the tree, but each
// usually has some subtrees that dp's tree has too, and different paths
// have different ones. So rather than keep only the cheapest sampled tree,
// auto keeps every set of operands any tree joined (a partial tree, given
// up once costlier than the best, included) and finds the cheapest tree
// made only of those sets: dynamic programming over the pool, a set's
// plan joining the cheapest plans of two pool sets that make it up. That
// tree is never costlier than any tree in the pool (each is one of the
// choices) and often cheaper than all of them. The pool gets opt_einsum's
// path, the sampled greedy paths, the cut trees (Note [Cut trees]), which
// differ most from them, and later the re-planned trees (path_auto.cpp).
//
// Note [Pool unions]
// Where the pool's tree still costs well above dp's, dp's tree is mostly
// made of pool sets too: what is missing is a few sets near its top, each
// the union of a pool set and a small one, often a chain of them (set +
// operand + operand ...). And the pool sets they join nearly always lie on
// some pool tree costing at most about 1.3x the cheapest (on the misses
// of the 1440 seeded networks of bench/einsum_auto_bench.cpp). So solve()
// can also compute, after each set's cheapest plan (its inside cost), its
// cheapest completion into a tree of the whole network (its outside cost:
// top down over the same splits, as the inside-outside algorithm), and
// add_unions() adds the unions of two disjoint sets sharing a label, both
// on pool trees within `reach` of the cheapest (inside plus outside cost),
// whose plans, join and intermediate stay under the cheapest tree's cost,
// pairs of the best-placed sets first, up to a bound; solve() then finds
// the cheapest tree again. A union with no completion in the pool still
// helps when a pool set is its union with another pool set, which the
// chains above are. One round of 250 unions, in place of 4 of the sampled
// greedy paths and 12 of the cut trees, took the seeded networks above
// 1.2x dp's cost from 32 of 1440 to 11 in about the same time; repeated
// rounds without a bound reach 1 of 1440, in several milliseconds. A
// second round, even a bounded one, costs a solve with completions more
// (+40% of the median search). So add_unions() makes the chains in the
// same round instead: after the unions, it joins each union made (its plan
// cost known from its parts) with the good sets, under the same bounds, up
// to `chains` of them. 100 chains took the 1440 networks from 11 above
// 1.2x dp to 8, and the worst of the 1280 never tuned on from 1.65x dp to
// 1.44x (10 above 1.2x, as before), for 2-20% more median search time.
// Without a bound on chains, 0 of the 720 networks of --first-seed 0 and
// 1 of the 640 of 2000 stay above 1.2x, but a search takes up to 3 ms:
// the pool's solve is linear in its splits (Note [Subset index]), and
// there are many. Ordering the chains by their plans' cost, or only
// joining single operands, did no better for the time.
//
// Note [Bounded solve]
// A set whose cheapest plan costs at least the cheapest tree known is on
// no cheaper tree, nor on any within `reach` of it when its plan costs
// that much. So solve() takes a bound: plans costing at least that are
// none (inf), so no split is tried with such a part, and the splits of
// such sets are not kept for the completions.
//
// Note [Incremental solve]
// After add_unions(), most of the pool's sets are as they were: a set
// none of whose subsets is new has the same splits, so the same plan.
// solve() keeps those plans (and, for completions, those splits) from the
// last solve when its bound is no higher and, for completions, the last
// solve kept splits too, and finds afresh the plans of the new sets and of
// the sets holding one (found with the subset index of the new sets).
// Many sets hold a union, so this saves less than it might: about a
// quarter of the plans over auto's solves, on the seeded networks.
//
// Note [Subset index]
// solve() tries, for each set, the pool sets that could be its part
// holding its lowest operand: those with the same lowest operand and fewer
// operands, a bucket of the pool sorted by lowest operand then size. Most
// are no subset of the set, and with unions the pool grows to thousands of
// sets, so testing each was most of the search. So solve() indexes the
// buckets, 64 entries at a time: per block and operand, a bit mask of the
// entries lacking that operand. A set's subsets in a block are the AND of
// the masks of the operands it lacks, stopping as soon as none are left
// (after a few operands, nearly always), a few instructions per 64 entries
// where the test was a few per entry. The subsets come in the same order
// as before, so the same tree comes out. The parts that are subsets are
// still many more than the splits, whose other part must be in the pool
// too: a one-hash Bloom filter of the pool's sets (16 bits a set, in L1)
// answers most of those look-ups before the hash table. add_unions()
// finds the disjoint pairs with the same index. The search is then
// linear in the pool's splits, not quadratic in its size.
//
// Note [Cut trees]
// Greedy builds bottom up, so its early joins decide which large
// intermediates the rest must pay for. A cut tree is built top down, as
// cotengra's partition-based trees: the operands split in two parts of
// about equal count whose shared labels (weighted by the log of their
// sizes: the log of the size of the intermediate they make) weigh least,
// each part split again the same way. Each cut starts from a part grown at
// random from one operand through shared labels to a random size within
// the balance, improved by one Fiduccia-Mattheyses pass (move the operand
// whose move shrinks the cut most, each once, keep the best cut seen, stop
// after a few moves that do not help); parts of fewer than kRefineMin
// operands are left as grown, since re-planning fixes the bottom of the
// tree anyway. The random start and balance make each tree different.

#include <cstdint>
#include <limits>
#include <vector>

#include "ops/einsum/tree.h"

namespace bp::ops::einsum {

// SplitMix64 (Steele, Lea and Flood 2014): the samplers' random draws,
// the same on every machine (no standard distribution is).
class Draws {
 public:
  explicit Draws(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53; }
  // A standard Gumbel draw, -log(-log(u)), from a table of its quantiles:
  // the logs were a fifth of the greedy sampler's time, and the noise
  // only has to order pairs, so 12 bits of it are plenty.
  double gumbel();

 private:
  uint64_t state_;
};

// The pool of Note [Pooled trees].
class SetPool {
 public:
  explicit SetPool(const Leaves& lv);
  // Adds `set`, made of its parts a and set - a (both in the pool already).
  void add(uint64_t set, uint64_t a);
  // Adds the sets of t's joins (a partial tree too).
  void add_tree(const Tree& t);
  // The cheapest tree of the whole network made of pool sets, and its
  // cost; false when the pool holds no tree of it costing under `bound`
  // (Note [Bounded solve]). With `outside`, also each set's cheapest
  // completion (Note [Pool unions]), which add_unions() reads; a set on no
  // tree costing under `bound` gets none. Reuses what the last solve found
  // where it can (Note [Incremental solve]).
  bool solve(Tree& out, double& cost, bool outside = false, double bound = std::numeric_limits<double>::infinity());
  // Adds up to `most` unions of two disjoint pool sets that share a label,
  // both on pool trees costing at most reach * cap, whose plans and
  // intermediate come under cap, the sets on the cheapest trees first,
  // then up to `chains` unions of one of those with one more such set
  // (Note [Pool unions]); how many it added. Reads the last
  // solve(..., true): sets added since then take no part.
  std::size_t add_unions(double cap, double reach, std::size_t most, std::size_t chains = 0);
  // The cheapest pool tree holding `set`, by the last solve(..., true):
  // its plan plus its completion (Note [Pool unions]); inf when none.
  double cheapest_through(uint64_t set) const;
  // The pool's sets, in the order added.
  std::size_t size() const { return sets_.size(); }
  uint64_t set_at(std::size_t i) const { return sets_[i]; }

 private:
  void put(uint64_t set, LabelSet idx);
  int find(uint64_t set) const;
  std::size_t home(uint64_t set) const;
  void insert(uint64_t set, int at);
  void grow();

  const Leaves& lv_;
  std::vector<uint64_t> sets_;  // the pool, in the order added
  std::vector<LabelSet> idx_;   // per set: its intermediate's labels
  std::vector<double> size_;    // and their size
  // Set -> position in sets_, open addressing (0: empty; no set is empty).
  std::vector<uint64_t> keys_;
  std::vector<int> where_;
  // The last solve's plan costs, completions and splits.
  struct Split {
    int set, a, b;
    double cost;
  };
  std::vector<double> best_, out_;
  std::vector<Split> splits_;
  // Per set: the part of its cheapest plan holding its lowest operand, and
  // which lone operands reduce first. And what the last solve saw (Note
  // [Incremental solve]).
  std::vector<int> split_;
  std::vector<uint8_t> reduce_;
  std::size_t solved_ = 0;
  double solved_bound_ = 0;
  bool solved_outside_ = false;
};

// The cut trees of Note [Cut trees].
class CutTrees {
 public:
  explicit CutTrees(const Leaves& lv);
  // Adds to `pool` the sets of one cut tree whose cuts leave each part at
  // least (1 - imbalance) / 2 of the operands (imbalance in [0, 1)).
  void add_tree(SetPool& pool, Draws& rng, double imbalance);

 private:
  struct Label {
    uint64_t holders;
    double weight;
  };
  void split(SetPool& pool, uint64_t s);
  uint64_t cut(uint64_t s);
  double gain(int v, uint64_t a, uint64_t s) const;
  double weight(uint64_t a, uint64_t s) const;
  uint64_t pick(uint64_t from);

  const Leaves& lv_;
  std::vector<Label> labels_;                // labels that can be cut
  std::vector<std::vector<Label>> edges_;    // per operand: its labels that can be cut
  uint64_t adjacent_[kMaxSetOperands] = {};  // per operand: operands sharing such a label
  Draws* rng_ = nullptr;
  double imbalance_ = 0;
};

}  // namespace bp::ops::einsum
