// "auto", and the subtree re-planning it uses on networks too big for dp
// (paths.h).
//
// opt_einsum's auto picks one optimiser by operand count (optimal up to 4,
// branch-all up to 6, branch-2 up to 8, branch-1 up to 14, greedy
// beyond). Native searches are cheap enough to do better at the same
// speed: up to 4 operands the exact optimum; beyond, that same choice,
// then dp within a budget of joins (up to kDpMaxOperands operands), or,
// where dp would take too long:
//   1. kTrials sampled greedy paths (Note [Sampled greedy]) and kCutTrees
//      trees cut top down (Note [Cut trees] in path_pool.h), every set of
//      operands they join kept in a pool;
//   2. the cheapest tree made of pool sets (Note [Pooled trees]), unless
//      the cheapest sampled path is cheaper;
//   3. that tree, and opt_einsum's path too where it costs less than
//      kAlsoReplan times the cheapest sampled path, re-planned exactly in
//      windows cut at the costliest joins (up to kWindow pieces), both
//      into the pool, and the pool's cheapest tree again;
//   4. up to kUnions unions of pool sets on the pool's cheapest trees,
//      and up to kChains of those joined with one more such set (Note
//      [Pool unions] in path_pool.h), and the pool's cheapest tree again;
//   5. a round of re-planning in windows cut at the largest intermediates
//      (up to kOtherWindow pieces: Note [Three openings]), up to kMoves
//      subtrees moved where no window reaches (Note [Subtree moves]), the
//      region at the root (up to kTopPieces pieces) and the subtree holding
//      most of the cost planned exactly by dp (Note [Top region dp]), then
//      rounds in windows opened at random, every other one wider, within a
//      budget of work (Note [Random openings]).
// The cheapest path wins, so auto is never costlier than opt_einsum's
// auto, and matches dp wherever dp fits the budget.
// bench/einsum_auto_bench.cpp measures how close it comes to dp beyond, and
// how long it takes. Against the cheapest of 24 sampled paths re-planned
// (before the pool), paths above 1.2x dp's cost went from 39 to 23 of 1280
// seeded networks of 16-30 operands (--first-seed 0 and 1000, both kinds:
// the networks tuned on) and from 16 to 8 and 22 to 8 of 640 never tuned on
// (--first-seed 2000 and 3000); the worst went from 2.4x dp's to 2.1x, for
// 1.1-1.3x the median search time (the slowest at 30 operands about 5 %
// slower). A few networks the old draws happened to solve are misses now.
// 128 sampled paths and 128 cut trees get to 6 of 1280 in five times the
// time: the pool gains with every tree, but less with each. The unions of
// step 4 gain more for the time: with them, 12 sampled paths and 4 cut
// trees (16 and 16 before) leave 11 of 1440 above 1.2x dp's cost (32
// before), in about the same time; their chains, 8 (and on 1280 never
// tuned on 10 as before, the worst 1.44x dp's rather than 1.65x), for
// 2-20% more median time. Step 3
// re-plans opt_einsum's path too because the cheapest tree before
// re-planning is not always the cheapest after: alone, the pooled tree lost
// to opt_einsum's re-planned path on a few networks. The random openings of
// step 5 took the networks above 1.2x dp's cost from 18 of 2880 (four seed
// sets) to 4, for a few percent more median time (Note [Random openings]),
// and the subtree moves of step 5 from 4 to 2, for 2-4% more (Note [Subtree
// moves]); the exact plan of the region at the root took the seven seed
// sets 0-6000 from 5 of 5040 to 3, the worst from 1.83x dp's to 1.25x, for
// 1-3% more median time, and that of the subtree holding most of the cost
// to 2, for about as much (3-4% more from 24 operands; Note [Top region
// dp]).
//
// Note [Sampled greedy]
// One greedy path is a guess: its first joins decide which large
// intermediates the rest must pay for, and re-planning small subtrees
// cannot move an operand far. So, as opt_einsum's RandomGreedy and
// cotengra do, auto draws more greedy paths: each joins connected pairs by
// the score size(result) - costmod * (size(a) + size(b)) (costmod 1 is
// opt_einsum's "memory removed"), less Gumbel noise of scale temperature *
// max(1, |score|), which picks a pair with the Boltzmann probability of its
// score; costmod (in [1, 4]) and temperature (in [0.1, 0.3]) are drawn per
// path from the ranges that did best on random networks of 20 to 30
// operands ([1, 2] before the pool: with it, [1, 4] gave as many misses on
// the networks tuned on, fewer on two sets never tuned on, and a smaller
// worst ratio on all of them). Operands that share no label meet last,
// smallest first. A path
// is given up as soon as it costs more than the cheapest so far (what it
// joined until then still goes into the pool), and the draws come from a
// fixed seed, so a network always gets the same path (the path cache
// relies on it).

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>

#include "ops/einsum/path_pool.h"
#include "ops/einsum/paths.h"
#include "ops/einsum/tree.h"


namespace bp::ops::einsum {
namespace {

constexpr int64_t kDpBudget = 3000;  // joins: a few hundred microseconds
constexpr int kDpMaxOperands = 16;   // beyond, dp rarely fits the budget: go straight to sampling
constexpr int kWindow = 5;
constexpr int kTrials = 12;          // sampled greedy paths (Note [Sampled greedy])
constexpr int kCutTrees = 4;         // cut trees (Note [Cut trees] in path_pool.h)
constexpr double kMaxImbalance = 0.5;
constexpr uint64_t kSeed = 0x5eed;
constexpr int kOtherWindow = 7;      // the rounds after the first (Notes [Three openings], [Random openings])
constexpr int kWideWindow = 8;       // every other round of random openings
constexpr double kRandomLeast = 0.3; // kLeast for the random rounds of kOtherWindow pieces
constexpr double kWideLeast = 0.5;   // and for those of kWideWindow
constexpr int kManyOperands = 24;    // from here on, more random rounds
constexpr int kRandomRounds = 2, kRandomRoundsMany = 6;
constexpr int64_t kRandomWork = 90000;  // 3^pieces per window searched, over all the random rounds
constexpr double kAlsoReplan = 1.5;  // opt_einsum's path costing less than this times the sampled one's is re-planned too
constexpr double kLeast = 0.1;      // regions costing less of the tree are not re-planned (Note [Capped windows])
constexpr double kUnionReach = 1.5;  // unions of sets on pool trees within this of the cheapest (Note [Pool unions])
constexpr std::size_t kUnions = 250; // at most this many
constexpr std::size_t kChains = 100; // and this many of those joined with one more set
constexpr int kMoves = 4;            // subtree moves at most (Note [Subtree moves])
constexpr int kTopPieces = 12;       // the region at the root planned exactly (Note [Top region dp])
constexpr int64_t kTopJoins = 8000;  // pairs its dp may consider
constexpr int64_t kTopJoinWork = 10; // what each takes from kRandomWork
constexpr double kWholeShare = 0.5;  // a subtree with this share of the cost is planned whole
constexpr int64_t kWholeJoins = 3000; // pairs its dp may consider

constexpr double kInf = std::numeric_limits<double>::infinity();

// The cost of the join at each internal node of a tree, computed once:
// re-planning below v changes v's join and makes new nodes, while every
// other node keeps its children.
class JoinCosts {
 public:
  JoinCosts(const Leaves& lv, const Tree& t) : lv_(lv), t_(t) {}
  double operator()(int v) {
    if (static_cast<std::size_t>(v) >= cost_.size()) cost_.resize(t_.nodes.size(), -1);
    if (cost_[v] < 0) {
      const Tree::Node& n = t_.nodes[v];
      const uint64_t a = t_.nodes[n.left].set, b = t_.nodes[n.right].set;
      cost_[v] = pair_cost(lv_, a, lv_.idx(a), b, lv_.idx(b), lv_.idx(n.set)).cost;
    }
    return cost_[v];
  }
  void changed(int v) { cost_[v] = -1; }

 private:
  const Leaves& lv_;
  const Tree& t_;
  std::vector<double> cost_;  // -1: not known yet
};

constexpr int kMaxWindow = 8;  // pieces: replan's tables live on the stack
constexpr std::size_t kMaxSubsets = std::size_t{1} << kMaxWindow;

// Note [Region labels]
// replan() works only with the labels of its pieces' intermediates,
// numbered afresh from 0, so its sets are small masks and their sizes
// come from per-nibble product tables rather than a walk over the labels.
// A subset's intermediate holds those of its pieces' labels that something
// outside it needs: the output or an operand outside the region (the
// region's external labels), or a piece of the region outside the subset;
// the latter is the union of the complement's labels, already in the table.
class RegionLabels {
 public:
  RegionLabels(const Leaves& lv, const Tree& t, const std::vector<int>& pieces) {
    const Network& net = lv.net();
    uint64_t region = 0;
    LabelSet piece_idx[kMaxWindow], all;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      region |= t.nodes[pieces[i]].set;
      piece_idx[i] = lv.idx(t.nodes[pieces[i]].set);
      all |= piece_idx[i];
    }
    all.for_each([&](int label) {
      const int local = labels_++;
      global_[local] = label;
      uint32_t holders = 0;
      for (std::size_t i = 0; i < pieces.size(); ++i)
        if (piece_idx[i].has(label)) holders |= 1u << i;
      if (net.output.has(label) || (lv.holders(label) & ~region)) external_.add(local);
      for (std::size_t i = 0; i < pieces.size(); ++i)
        if (holders >> i & 1) piece_[i].add(local);
    });
    nibbles_ = (labels_ + 3) / 4;
    for (int j = 0; j < nibbles_; ++j)
      for (int v = 0; v < 16; ++v) {
        double p = 1;
        for (int b = 0; b < 4; ++b)
          if ((v >> b & 1) && 4 * j + b < labels_) p *= net.sizes[static_cast<std::size_t>(global_[4 * j + b])];
        table_[j][v] = p;
      }
  }
  LabelSet piece(int i) const { return piece_[i]; }
  // The labels that the output or an operand outside the region needs:
  // they stay in every intermediate of the region's pieces.
  LabelSet external() const { return external_; }
  double size_of(LabelSet local) const {
    double out = 1;
    for (int j = 0; j < nibbles_; ++j) out *= table_[j][local.w[j >> 4] >> (4 * (j & 15)) & 15];
    return out;
  }
  LabelSet global(LabelSet local) const {
    LabelSet out;
    local.for_each([&](int l) { out.add(global_[l]); });
    return out;
  }

 private:
  int labels_ = 0, nibbles_ = 0;
  int global_[kMaxLabels];
  LabelSet external_;
  LabelSet piece_[kMaxWindow];
  double table_[kMaxLabels / 4][16];
};

// Note [Three openings]
// replan() cuts the tree below a node into pieces by opening joins one at
// a time, which decides what it can rearrange. Opening the costliest join
// first goes where the cost is; opening the join over the most operands
// first reaches pieces of about equal size; opening the largest
// intermediate first breaks up what the path carries longest. Each is a
// different neighbourhood: a tree that no window of one opening improves
// often still has a cheaper rearrangement in a window of another. On 360
// seeded random networks of 16 to 30 operands (bench/einsum_auto_bench.cpp)
// the share of paths above 1.2x dp's cost went from 9 % (costliest first
// only, then the costliest joins again with 8 pieces) to 4-5 % with the
// three rounds, the first two of them bigger windows than before; fewer
// sampled greedy paths (24 -> 12) and a smaller first window (6 -> 5) pay
// for most of the time they take, and made no measurable difference to cost.
// Wider windows no longer pay: windows of 8 to 10 pieces at the top of the
// tree, after the three rounds, changed no path above 1.2x dp's cost on 240
// seeded networks of 22-30 operands (those paths differ from dp's all
// through the tree: the choice of start decides them). The round of
// windows opened at the most operands has since given way to windows
// opened at random (Note [Random openings]), which find more in its time.
enum class Opening { costliest, largest_intermediate, random };

// replan()'s tables, per subset of its pieces: made once per search (this
// runs thousands of times a search, and constructing the label sets afresh
// zeroed them all each time).
struct Subsets {
  uint64_t sets[kMaxSubsets];
  LabelSet idx[kMaxSubsets], held[kMaxSubsets];  // region-local numbering
  double cost[kMaxSubsets], size[kMaxSubsets];
  uint32_t split[kMaxSubsets];
  uint8_t reduce[kMaxSubsets];
  uint32_t touching[kMaxSubsets];  // the pieces that share a label with the subset's
  char connected[kMaxSubsets];
};

// Note [Random openings]
// After the fixed openings, the paths still above 1.2x dp's cost differed
// from dp's in one region of 4 to 8 pieces, but not one that a fixed rule
// opens: in regular n=27 seed 213816 (--first-seed 0), 4 pieces below a
// node of 20 operands, one of them under a join that is neither among the
// costliest nor the largest; in regular n=24 seed 190070, 7 pieces, lone
// operands hanging at different depths that dp's tree joins elsewhere. So
// more rounds follow whose windows open, at each step, a piece drawn at
// random (uniformly: weighting the draw by join cost found less), every
// other round 8 pieces wide rather than 7 and only on regions of at least
// kWideLeast of the tree (a search over 8 pieces costs three over 7
// pieces).
// Below kManyOperands operands kRandomRounds rounds, from there on
// kRandomRoundsMany: no network below 24 operands was above 1.2x dp's cost
// in any seed set (the worst 1.11x), and the misses grow with the count.
// Each window searched takes 3^pieces (about its splits) of a budget,
// kRandomWork over all the rounds, which stops them on the networks that
// would take longest; a count, not a clock, so the same network always
// gets the same path, the draws coming from the search's fixed seed.
// On the 2880 seeded networks of bench/einsum_auto_bench.cpp (--step 1
// --networks 24, --first-seed 0, 1000, 2000, 3000), paths above 1.2x dp's
// cost went from 4, 4, 4, 6 to 0, 2, 2, 0 and above 1.1x from 34 to 10; the
// worst from 1.34, 1.35, 1.44, 1.88x dp's to 1.19, 1.29, 1.24, 1.18x. With
// four other seeds for the draws, 3 to 5 of 2880 stay above 1.2x, none of
// --first-seed 0. The median search takes 2-6% more CPU time, p99
// 15-20% more, the slowest 0.75-0.80 ms rather than 0.65-0.70 (in runs
// interleaved with the old build); replan() got cheaper for them (the
// bound test first, connected sets found from a piece and the rest, sizes
// only of connected sets) and improve_tree() skips subtrees under its
// floor. Tried and dropped: the most-operands round kept (with three
// random rounds of 7 pieces: 7 of 2880 rather than 9, averaged over four
// seeds of the draws, for 10% more median time; the schedule above takes
// less time for 4); the largest-intermediate round dropped too (the worst
// at 2.7x dp's); random windows of 6 pieces (no gain); the pool solved
// again after the rounds (no tree changed); exact dp capped by auto's own
// cost (120k-600k joins on the misses, against kDpBudget's 3000).
//
// Note [Capped windows]
// replan() only wants a plan of its region cheaper than the current one
// (`current`), so a set of pieces whose plan already costs at least
// current - size(its intermediate) is useless: whatever joins that
// intermediate later pays at least its size. Such plans are never kept
// (a set with none is never a part), which also cuts the splits tried
// above it: the search is dp's, capped by the incumbent. Sets whose pieces
// share no label are skipped, as dp skips them (no outer products inside
// a connected region); a region that is not connected stays as it is.
// In auto, a region whose joins cost less than kLeast of the whole tree
// is not re-planned at all: it cannot make the tree much cheaper, and such
// regions are most of them (in the bench, as many paths above 1.2x dp's
// cost with it as without, for 14 % less work).

// Cuts the tree below node v into up to `window` pieces by opening joins
// one at a time, the heaviest by `weight` (a node's, called once per node
// in the order they come up; < 0: not to be opened) first: `region` gets
// the nodes opened, v first.
template <class Weight>
void open_pieces(const Tree& t, int v, int window, Weight weight, std::vector<int>& pieces, std::vector<int>& region) {
  pieces = {t.nodes[v].left, t.nodes[v].right};
  region = {v};
  std::vector<double> heaviness;
  for (int u : pieces) heaviness.push_back(t.nodes[u].left < 0 ? -1 : weight(u));  // a leaf: nothing to open
  while (static_cast<int>(pieces.size()) < window) {
    int widest = -1;
    for (std::size_t i = 0; i < pieces.size(); ++i)
      if (heaviness[i] >= 0 && (widest < 0 || heaviness[i] > heaviness[widest])) widest = static_cast<int>(i);
    if (widest < 0) break;
    const int u = pieces[widest];
    const int l = t.nodes[u].left, r = t.nodes[u].right;
    heaviness[widest] = t.nodes[l].left < 0 ? -1 : weight(l);
    heaviness.push_back(t.nodes[r].left < 0 ? -1 : weight(r));
    region.push_back(u);
    pieces[widest] = l;
    pieces.push_back(r);
  }
}

// Re-plans the region below node v, cut at up to `window` (<= kMaxWindow)
// pieces opened as `opening` says (Opening::random draws from `rng`);
// true when it got cheaper. With `work`, each search takes 3^pieces of it
// (about its splits), and none starts once too little is left (Note
// [Random openings]).
bool replan(const Leaves& lv, Tree& t, JoinCosts& join, Subsets& scratch, int v, int window, Opening opening,
            double floor, Draws* rng = nullptr, int64_t* work = nullptr) {
  std::vector<int> pieces, region;
  // Open up joins below one at a time, the heaviest first (Note [Three openings]).
  auto weight = [&](int u) -> double {
    switch (opening) {
      case Opening::costliest: return join(u);
      case Opening::largest_intermediate: return lv.net().size_of(lv.idx(t.nodes[u].set));
      case Opening::random: return rng->uniform(0, 1);
    }
    return join(u);
  };
  open_pieces(t, v, std::min(window, kMaxWindow), weight, pieces, region);
  if (pieces.size() < 3) return false;
  double current = 0;
  for (int u : region) current += join(u);
  if (current < floor) return false;  // Note [Capped windows]: too cheap to matter
  if (work) {
    int64_t splits = 1;
    for (std::size_t i = 0; i < pieces.size(); ++i) splits *= 3;
    if (*work < splits) return false;
    *work -= splits;
  }

  const int k = static_cast<int>(pieces.size());
  const std::size_t count = std::size_t{1} << k;
  const Network& net = lv.net();
  // The labels of the pieces' intermediates, numbered afresh (Note [Region
  // labels]), with what each needs to leave a subset's intermediate.
  const RegionLabels rl(lv, t, pieces);
  uint64_t* sets = scratch.sets;
  LabelSet *idx = scratch.idx, *held = scratch.held;
  double *cost = scratch.cost, *size = scratch.size;
  uint32_t* split = scratch.split;
  uint8_t* reduce = scratch.reduce;
  uint32_t* touching = scratch.touching;
  char* connected = scratch.connected;
  sets[0] = 0;
  std::fill(cost, cost + count, kInf);
  for (std::size_t m = 1; m < count; ++m) {
    const std::size_t rest = m & (m - 1), low = m ^ rest;
    sets[m] = sets[rest] | t.nodes[pieces[std::countr_zero(m)]].set;
    held[m] = rest ? held[rest] | held[low] : rl.piece(std::countr_zero(m));
  }
  // A label of m's pieces stays when something outside the region needs it,
  // or a piece of the region outside m holds it (Note [Region labels]).
  const LabelSet external = rl.external();
  idx[count - 1] = held[count - 1] & external;
  for (std::size_t m = 1; m + 1 < count; ++m) idx[m] = held[m] & (external | held[(count - 1) ^ m]);
  // Pieces that are one operand able to sum labels of its own first: their
  // joins go through pair_cost, which weighs that; other joins cost
  // size(idx[a] | idx[b]) * (1 + inner) (Note [Einsum cost model]).
  uint32_t reducible = 0;
  for (int i = 0; i < k; ++i) {
    const uint64_t set = t.nodes[pieces[i]].set;
    if (!(set & (set - 1)) && !(net.inputs[std::countr_zero(set)] == lv.idx(set))) reducible |= 1u << i;
  }
  // Within a connected set, only splits into two connected parts that
  // share a label (as dp: outer products only where nothing else joins).
  uint32_t adjacent[kMaxWindow] = {};
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j)
      if (i != j && idx[std::size_t{1} << i].intersects(idx[std::size_t{1} << j])) adjacent[i] |= 1u << j;
  // A set of two or more pieces is connected when one of its pieces
  // touches the rest and the rest is connected (a leaf of a spanning tree
  // is such a piece). Only connected sets get plans, so only they need
  // sizes (the others' cost, inf, rules them out before their size counts).
  touching[0] = 0;
  for (std::size_t m = 1; m < count; ++m) {
    touching[m] = touching[m & (m - 1)] | adjacent[std::countr_zero(m)];
    char c = (m & (m - 1)) == 0;
    for (std::size_t r = m; r && !c; r &= r - 1) {
      const int i = std::countr_zero(r);
      c = connected[m ^ (std::size_t{1} << i)] && (adjacent[i] & m) != 0;
    }
    connected[m] = c;
    size[m] = c ? rl.size_of(idx[m]) : 0;
  }
  for (int i = 0; i < k; ++i) cost[std::size_t{1} << i] = 0;
  const std::size_t full = count - 1;
  if (!connected[full]) return false;  // pieces that meet in an outer product: left as they are
  // Only connected sets, split into two connected parts that share a label
  // (as dp: no outer products), under the region's current cost (Note
  // [Capped windows]).
  for (std::size_t m = 3; m < count; ++m) {
    if (!(m & (m - 1)) || !connected[m]) continue;
    double best = m == full ? current * (1 - 1e-12) : current - size[m];
    if (best <= 0) continue;  // joining its intermediate alone uses up what the region may cost
    // Each split once: a holds m's lowest piece and b is not empty.
    const std::size_t low = m & (~m + 1), others = m ^ low;
    for (std::size_t rest = others; rest;) {
      rest = (rest - 1) & others;
      const std::size_t a = rest | low, b = m ^ a;
      // A join costs at least the size of either side's intermediate. This
      // test, the cheapest, comes first: a part that is not connected has
      // no plan (cost inf), and nor has one over its budget.
      if (cost[a] + cost[b] + std::max(size[a], size[b]) >= best) continue;
      if (!(touching[a] & b)) continue;  // the parts share no label
      Join j;
      const bool lone_a = (a & (a - 1)) == 0, lone_b = (b & (b - 1)) == 0;
      if (!(lone_a && (reducible & a)) && !(lone_b && (reducible & b))) {
        j.cost = size[a] * size[b] / rl.size_of(idx[a] & idx[b]) * ((idx[a] | idx[b]) == idx[m] ? 1 : 2);
      } else {
        j = pair_cost(lv, sets[a], rl.global(idx[a]), sets[b], rl.global(idx[b]), rl.global(idx[m]));
      }
      const double c = cost[a] + cost[b] + j.cost;
      if (c < best) {
        best = cost[m] = c;
        split[m] = static_cast<uint32_t>(a);
        reduce[m] = static_cast<uint8_t>(j.reduce_a | (j.reduce_b << 1));
      }
    }
  }
  if (!(cost[full] < current * (1 - 1e-12))) return false;
  std::function<int(std::size_t)> make = [&](std::size_t m) -> int {
    if (std::popcount(m) == 1) return pieces[std::countr_zero(m)];
    const int l = make(split[m]), r = make(m ^ split[m]);
    t.nodes.push_back({sets[m], l, r, (reduce[m] & 1) != 0, (reduce[m] & 2) != 0});
    return static_cast<int>(t.nodes.size()) - 1;
  };
  const int l = make(split[full]), r = make(full ^ split[full]);
  t.nodes[v].left = l;
  t.nodes[v].right = r;
  t.nodes[v].reduce_left = reduce[full] & 1;
  t.nodes[v].reduce_right = (reduce[full] & 2) != 0;
  join.changed(v);
  return true;
}

double cost_of(const Network& net, const Path& p) { return evaluate(net, p).opt_cost; }

// Re-plans every subtree of `t` of up to `window` pieces until nothing gets
// cheaper (at most kPasses rounds). A round visits children before parents
// and re-plans a node only when its subtree changed since its last visit;
// regions whose joins cost less than `least` times the tree's are left
// alone (Note [Capped windows]). `rng` and `work` go to replan().
void improve_tree(const Leaves& lv, Tree& t, JoinCosts& join, Subsets& scratch, int window, Opening opening,
                  double least = 0, Draws* rng = nullptr, int64_t* work = nullptr) {
  constexpr int kPasses = 8;
  // Per node, what the joins of its subtree cost at the start. A region
  // costs no more than the subtree it tops, and re-planning only makes
  // subtrees cheaper, so no region in a subtree that cost less than the
  // floor is worth a look: the passes do not go down there (nodes made
  // since: not known, inf).
  std::vector<double> subtree(t.nodes.size(), kInf);
  std::function<double(int)> sum = [&](int v) -> double {
    if (t.nodes[v].left < 0) return 0;
    return subtree[v] = join(v) + sum(t.nodes[v].left) + sum(t.nodes[v].right);
  };
  const double floor = least > 0 ? least * sum(t.root) : 0;
  std::vector<char> retry(t.nodes.size(), 1), next;
  // Re-plans below and at v; true when anything in v's subtree changed.
  std::function<bool(int)> visit = [&](int v) -> bool {
    if (t.nodes[v].left < 0) return false;
    if (static_cast<std::size_t>(v) < subtree.size() && subtree[v] * (1 + 1e-9) < floor) return false;
    const bool left = visit(t.nodes[v].left);
    const bool below = visit(t.nodes[v].right) || left;
    if (!below && !retry[v]) return below;
    if (!replan(lv, t, join, scratch, v, window, opening, floor, rng, work)) return below;
    next.resize(t.nodes.size(), 1);  // the nodes it made, and v, get another visit
    next[v] = 1;
    return true;
  };
  for (int pass = 0; pass < kPasses; ++pass) {
    next.assign(t.nodes.size(), 0);
    if (!visit(t.root)) break;
    retry = next;
  }
}

// Note [Top region dp]
// The two worst paths of --first-seed 4000 (bench/einsum_auto_bench.cpp),
// chain n=29 seed 233655 at 1.83x dp's cost and regular n=26 seed 209898
// at 1.49x, were no tangle of a few pieces: their trees and dp's agree
// below a few subtrees (one of 17 operands in the chain, of 6 and 5 in the
// regular one) and join the rest, 11 and 7 lone operands and a pair, in
// another order above them, the costliest joins of the tree among them.
// That region of 12 pieces is beyond a window (replan()'s search grows as
// 3^pieces: 8 at most), a move (several operands must go together) and
// the pool (no sampled path joined dp's sets). So, from kManyOperands
// operands (no network below was above 1.2x dp's cost), the region at the
// root of up to kTopPieces pieces is planned by dp_path() itself, as a
// network of its own: each lone operand as it is, any other piece its
// intermediate, the root's labels for the output; the region's current
// cost caps the search (Note [Capped dp]) and kTopJoins pairs bound it.
// The region opens the joins with the fewest operands on their smaller
// side first: they break up the small subtrees and the steps that add one
// operand at a time, where lone operands sit, and leave a large subtree,
// which the windows have re-planned already, whole. Opening the costliest
// joins or subtrees first reached the chain's region only at 15 pieces
// (they open the 17-operand subtree), the fewest operands first the
// regular one's at 17 (they break up its 6- and 5-operand subtrees before
// the 15-operand spine above them). It comes before the random rounds,
// which then re-plan within the new region (after them, the pieces of the
// regular one differ and its region is not found), and each pair its dp
// considers takes kTopJoinWork from their budget: a pair costs about 35
// units of that budget in time, but taking 20 lost two chain networks the
// random rounds had found (n=29 seed 231651 of --first-seed 2000, n=25
// seed 200986 of 3000). On the 5040 seeded networks of the seven seed sets
// 0 to 6000 (--networks 24 --step 1, both kinds), paths above 1.2x dp's
// cost went from 0, 1, 1, 0, 2, 1, 0 to 0, 1, 1, 0, 0, 1, 0: the chain
// network at dp's cost now, the regular one at 1.16x; the worst of set
// 4000 from 1.83x to 1.17x. dp considers a median 850 pairs here (90 % of
// searches under 2200, the chain network 7750), the median search takes
// 1-3 % more CPU time, p99 5-12 % more, the slowest 0.82-0.97 ms rather
// than 0.73-0.83 (runs interleaved with the old build): the chain network,
// 0.71 -> 0.95 ms. The three misses left are not at the root: no region
// there of 12 to 16 pieces, opened so, is cheaper.
// One of them, regular n=28 seed 223748 of --first-seed 2000 (1.21x), has
// most of its cost in a subtree of 10 operands that dp's tree joins in
// another order: too many for a window, few enough for dp to plan whole
// (439 pairs). So the subtree holding at least kWholeShare of the tree's
// cost, when it has more operands than a window's pieces and no more than
// kTopPieces, is planned exactly too, within kWholeJoins pairs and what
// the region at the root left of kTopJoins (which bounds the slowest
// searches), each pair again taken from the random rounds' budget. In
// the seven seed sets that network is at dp's cost now, the misses 3 to
// 2 (set 2000 from 1 to 0, its worst from 1.21x to 1.07x; chain n=25 seed
// 203978 of 6000 went from under 1.15x to 1.19x); such a subtree exists
// in 30 % of the searches from kManyOperands operands, and dp takes a
// median 780 pairs on it. Against the region at the root alone, searches
// of 24 to 30 operands take 19 us more on average (3-4 %), p99 4 %
// more, the slowest about the same. Subtrees of lower shares (down to
// kLeast) were 2.5 times as many for no more paths below 1.2x.
//
// Re-plans the region below node v of up to `window` pieces exactly (Note
// [Top region dp]), within `budget` pairs of dp; true when it got cheaper.
// `spent` gets the pairs considered.
bool replan_exact(const Leaves& lv, Tree& t, JoinCosts& join, int v, int window, int64_t budget, int64_t& spent) {
  // Joins with the fewest operands on their smaller side open first.
  auto weight = [&](int u) -> double {
    const Tree::Node& nd = t.nodes[u];
    return 64 - std::min(std::popcount(t.nodes[nd.left].set), std::popcount(t.nodes[nd.right].set));
  };
  std::vector<int> pieces, region;
  open_pieces(t, v, window, weight, pieces, region);
  double current = 0;
  for (int u : region) current += join(u);
  // The pieces as the operands of a network of their own: a lone operand
  // as it is (it may sum labels of its own first), any other piece its
  // intermediate; the output, what v's intermediate keeps.
  const Network& net = lv.net();
  Network part{{}, lv.idx(t.nodes[v].set), net.sizes};
  for (int u : pieces) {
    const uint64_t set = t.nodes[u].set;
    part.inputs.push_back(t.nodes[u].left < 0 ? net.inputs[std::countr_zero(set)] : lv.idx(set));
  }
  const std::optional<Path> planned = dp_path(part, budget, current, &spent);
  if (!planned || !(cost_of(part, *planned) < current * (1 - 1e-12))) return false;
  const std::optional<Tree> plan = path_to_tree(part, *planned);
  if (!plan) return false;
  // Its joins into the tree, the pieces for its leaves and v for its root.
  std::function<int(int)> graft = [&](int w) -> int {
    const Tree::Node& nd = plan->nodes[w];
    if (nd.left < 0) return pieces[std::countr_zero(nd.set)];
    const int l = graft(nd.left), r = graft(nd.right);
    const Tree::Node made{t.nodes[l].set | t.nodes[r].set, l, r, nd.reduce_left, nd.reduce_right};
    if (w == plan->root) {
      t.nodes[v] = made;
      return v;
    }
    t.nodes.push_back(made);
    return static_cast<int>(t.nodes.size()) - 1;
  };
  graft(plan->root);
  join.changed(v);
  return true;
}

// The subtree of more than kMaxWindow and at most `most` operands whose
// joins cost at least `share` of the tree's (from a half, there is one at
// most, but for exact halves); -1 when there is none.
int heavy_subtree(const Tree& t, JoinCosts& join, int most, double share) {
  std::vector<double> below(t.nodes.size(), -1);  // what each subtree's joins cost
  std::function<double(int)> sum = [&](int v) -> double {
    const Tree::Node& nd = t.nodes[v];
    if (nd.left < 0) return 0;
    if (below[v] < 0) below[v] = join(v) + sum(nd.left) + sum(nd.right);
    return below[v];
  };
  const double least = share * sum(t.root);
  int v = t.root;
  while (std::popcount(t.nodes[v].set) > most) {
    const int l = t.nodes[v].left, r = t.nodes[v].right;  // more than `most` operands: not a leaf
    v = sum(l) >= least ? l : sum(r) >= least ? r : -1;
    if (v < 0) return -1;
  }
  return std::popcount(t.nodes[v].set) > kMaxWindow ? v : -1;
}

// Note [Subtree moves]
// A window re-plans the pieces below one node, so it cannot carry a piece
// far: a lone operand or small subtree that the tree joins deep in one
// branch, but dp's near the top (or in another branch), stays where it is,
// and every join between the two places carries its labels. Regular n=30
// seed 239591 (--first-seed 2000) was 1.24x dp's cost for one operand
// joined 22 joins below where dp's tree joins it. So auto also moves
// subtrees (subtree prune and regraft, as in phylogenetic tree search):
// take a subtree out of its join (its sibling takes the join's place) and
// join it above another node that holds one of its neighbours (an operand
// sharing a label with it), the cheapest move first, until no move makes
// the tree cheaper (at most kMoves). A move changes only the joins on the
// two paths from where the subtree was and where it goes up to where they
// meet, so improve() prices every move of a subtree in one walk: up the
// path it leaves, summing what those joins cost without it, and at each
// node of that path, down the other side into the subtrees holding a
// neighbour, summing what the joins cost with it. The intermediates change
// only in the subtree's own labels, so each is found from the node's
// (without(), with()) rather than from all its operands; the walk up stops
// where no neighbour is left outside (no target is further up), and the
// walk down leaves a branch as soon as what it has summed no longer beats
// the best move (a heuristic cut: a join seldom gets cheaper for taking the
// subtree in). On the 2880 seeded networks of the four seed sets
// (--first-seed 0, 1000, 2000, 3000), the moves of lone operands alone took
// the paths above 1.2x dp's cost from 0, 2, 2, 0 to 0, 2, 1, 0; of any
// subtree, to 0, 1, 1, 0, the worst from 1.19, 1.29, 1.24, 1.18x dp's to
// 1.03, 1.21, 1.21, 1.18x; on three sets never tuned on (4000, 5000,
// 6000), from 2, 2, 1 to 2, 1, 0. They take 5-22 us a search (16-30
// operands), the median search 2-4 % more in all, p99 3-6 %, the slowest
// 0.75-0.86 ms rather than 0.70-0.83 (runs interleaved with the old
// build). Moving only subtrees of up to 5 operands did as well, in about
// as much time. Placed before the largest-intermediate round rather than
// after it, inside the first rounds (their trees go into the pool), after
// the random rounds (then with a costliest round) or after every random
// round, they found no more, and some of those found less. The misses
// left differ from dp's in a region of 7 to 9 pieces, several of them
// lone operands, that no single move improves.
class SubtreeMoves {
 public:
  SubtreeMoves(const Leaves& lv, Tree& t, JoinCosts& join) : lv_(lv), t_(t), join_(join) {}

  // Makes the cheapest move when it saves anything; true when it did.
  bool improve() {
    index();
    Move best;
    best.delta = -1e-9 * total_;  // not rounding noise
    for (int v : movable_) consider(v, best);
    if (best.moved < 0) return false;
    apply(best);
    return true;
  }

 private:
  struct Move {
    double delta = 0;                        // what it changes the tree's cost by
    int moved = -1, target = -1, meet = -1;  // meet: where the two paths meet
  };

  // Parents, intermediates and the tree's cost, over the nodes on the tree.
  void index() {
    parent_.assign(t_.nodes.size(), -1);
    idx_.resize(t_.nodes.size());
    movable_.clear();
    total_ = 0;
    std::function<void(int)> walk = [&](int v) {
      const Tree::Node& nd = t_.nodes[v];
      if (parent_[v] >= 0 && parent_[parent_[v]] >= 0) movable_.push_back(v);  // its join is not the root's
      if (nd.left < 0) {
        idx_[v] = lv_.idx(nd.set);
        return;
      }
      total_ += join_(v);
      parent_[nd.left] = parent_[nd.right] = v;
      walk(nd.left);
      walk(nd.right);
      // What its sides hold that something outside it needs.
      idx_[v] = lv_.keep(nd.set, idx_[nd.left] | idx_[nd.right]);
    };
    walk(t_.root);
  }

  int other_child(int v, int child) const {
    const Tree::Node& nd = t_.nodes[v];
    return nd.left == child ? nd.right : nd.left;
  }
  double cost(uint64_t a, LabelSet a_idx, uint64_t b, LabelSet b_idx, LabelSet result) const {
    return pair_cost(lv_, a, a_idx, b, b_idx, result).cost;
  }
  // The intermediate of a node's set without the moved subtree (`rest` is
  // what is left) or with it (`all` the union), from the node's own (`idx`):
  // only the subtree's labels, labels_, can change.
  LabelSet without(LabelSet idx, uint64_t rest) const {
    LabelSet out = idx - labels_;
    labels_.for_each([&](int l) {
      if (lv_.holders(l) & rest) out.add(l);  // the subtree, outside now, needs it
    });
    return out;
  }
  LabelSet with(LabelSet idx, uint64_t all) const {
    LabelSet out = idx - labels_;
    const LabelSet output = lv_.net().output;
    labels_.for_each([&](int l) {
      if (output.has(l) || (lv_.holders(l) & ~all)) out.add(l);
    });
    return out;
  }

  // Every move of subtree x: up the path it leaves (from its parent p, whose
  // join goes), and at each node `meet` of it, into meet's other side.
  void consider(int x, Move& best) {
    const uint64_t set = t_.nodes[x].set, near = lv_.neighbours(set);
    labels_ = idx_[x];
    const int p = parent_[x];
    // The path's side at meet without x, and what the joins below meet cost less.
    int from = p;
    uint64_t side = t_.nodes[other_child(p, x)].set;
    LabelSet side_idx = idx_[other_child(p, x)];
    double delta = -join_(p);
    for (int meet = parent_[p]; meet >= 0; from = meet, meet = parent_[meet]) {
      const int other = other_child(meet, from);
      const uint64_t other_set = t_.nodes[other].set;
      if (other_set & near) {
        const LabelSet plus = with(idx_[other], other_set | set);
        const double there = delta + cost(side, side_idx, other_set | set, plus, idx_[meet]) - join_(meet);
        if (there < best.delta) targets(x, other, plus, there, near, meet, best);
      }
      if (!(near & ~t_.nodes[meet].set)) break;  // no neighbour further out: no target either
      const uint64_t less = t_.nodes[meet].set & ~set;
      const LabelSet less_idx = without(idx_[meet], less);
      delta += cost(side, side_idx, other_set, idx_[other], less_idx) - join_(meet);
      side = less;
      side_idx = less_idx;
    }
  }

  // The moves of x above v or below it, v's intermediate with x being
  // `plus` and `delta` what the move costs above v.
  void targets(int x, int v, LabelSet plus, double delta, uint64_t near, int meet, Move& best) {
    const Tree::Node& nd = t_.nodes[v];
    const double here = delta + cost(nd.set, idx_[v], t_.nodes[x].set, idx_[x], plus);
    if (here < best.delta) best = {here, x, v, meet};
    if (nd.left < 0) return;
    for (const int child : {nd.left, nd.right}) {
      if (!(t_.nodes[child].set & near)) continue;
      const int other = other_child(v, child);
      const uint64_t all = t_.nodes[child].set | t_.nodes[x].set;
      const LabelSet child_plus = with(idx_[child], all);
      const double below = delta + cost(all, child_plus, t_.nodes[other].set, idx_[other], plus) - join_(v);
      if (below < best.delta) targets(x, child, child_plus, below, near, meet, best);
    }
  }

  // A node whose sides changed: its join's flags (which lone operand
  // reduces first) afresh, and its cost forgotten.
  void rejoin(int v) {
    Tree::Node& nd = t_.nodes[v];
    const uint64_t a = t_.nodes[nd.left].set, b = t_.nodes[nd.right].set;
    const Join j = pair_cost(lv_, a, lv_.idx(a), b, lv_.idx(b), lv_.idx(nd.set));
    nd.reduce_left = j.reduce_a;
    nd.reduce_right = j.reduce_b;
    join_.changed(v);
  }
  void replace_child(int v, int child, int by) {
    Tree::Node& nd = t_.nodes[v];
    (nd.left == child ? nd.left : nd.right) = by;
  }

  void apply(const Move& m) {
    const int p = parent_[m.moved], up = parent_[m.target];
    const uint64_t set = t_.nodes[m.moved].set;
    // Out of its join: the sibling takes p's place, and the nodes up to
    // meet lose the subtree's operands.
    replace_child(parent_[p], p, other_child(p, m.moved));
    for (int v = parent_[p]; v != m.meet; v = parent_[v]) t_.nodes[v].set &= ~set;
    // Node p, free now, joins it with the target; the nodes above, up to
    // meet, gain its operands.
    replace_child(up, m.target, p);
    t_.nodes[p] = {t_.nodes[m.target].set | set, m.target, m.moved, false, false};
    for (int v = up; v != m.meet; v = parent_[v]) t_.nodes[v].set |= set;
    // Their joins are new, and meet's (parent_ still holds the old tree).
    rejoin(p);
    for (int v = parent_[p]; v != m.meet; v = parent_[v]) rejoin(v);
    for (int v = up; v != m.meet; v = parent_[v]) rejoin(v);
    rejoin(m.meet);
  }

  const Leaves& lv_;
  Tree& t_;
  JoinCosts& join_;
  std::vector<int> parent_, movable_;
  std::vector<LabelSet> idx_;
  LabelSet labels_;  // the intermediate of the subtree whose moves are priced
  double total_ = 0;
};

// Sampled greedy paths (Note [Sampled greedy]) as trees.
class SampledGreedy {
 public:
  explicit SampledGreedy(const Leaves& lv) : lv_(lv) {
    // The operands and the pairs that share a label: the same for every path.
    const int n = lv.net().size();
    for (int i = 0; i < n; ++i) {
      const uint64_t set = uint64_t{1} << i;
      const LabelSet idx = lv.idx(set);
      leaves_.push_back({set, lv.neighbours(set), idx, lv.net().size_of(idx), true});
    }
    for (int i = 0; i < n; ++i) owner_.push_back(i);
    for (int i = 0; i < n; ++i) pairs_of(leaves_, i, i, first_pairs_);
  }

  // One path's tree and cost, or false once its cost reaches `cap`.
  bool run(Draws& rng, double costmod, double temperature, double cap, Tree& tree, double& cost) {
    const int n = static_cast<int>(leaves_.size());
    live_ = leaves_;
    for (int i = 0; i < n; ++i) owner_[i] = i;
    tree.nodes.clear();
    for (const Live& l : leaves_) tree.nodes.push_back({l.set, -1, -1, false, false});
    rng_ = &rng;
    costmod_ = costmod;
    temperature_ = temperature;
    pairs_.clear();
    for (const Pair& p : first_pairs_) pairs_.push_back(scored(p));
    std::make_heap(pairs_.begin(), pairs_.end(), Later{});
    cost = 0;
    for (int left = n; left > 1; --left) {
      int a = -1, b = -1;
      if (!cheapest_pair(a, b)) smallest_two(a, b);  // nothing shares a label: an outer product
      const int made = join(a, b, tree, cost);
      if (cost >= cap) return false;
      fresh_.clear();
      pairs_of(live_, made, made, fresh_);
      for (const Pair& p : fresh_) queue(p);
    }
    tree.root = static_cast<int>(tree.nodes.size()) - 1;
    return true;
  }

 private:
  struct Live {
    uint64_t set, neighbours;  // operands, and operands outside that share a label with them
    LabelSet idx;
    double size;
    bool alive;
  };
  struct Pair {
    double result, sides;  // sizes: the intermediate, and both operands together
    int a, b;
  };
  // A queued pair: half a Pair's size, since moving entries about is most of the heap's work.
  struct Queued {
    double score;
    int a, b;
  };

  // The pairs of node x with each live node below `below` that shares a label with it.
  void pairs_of(const std::vector<Live>& live, int x, int below, std::vector<Pair>& out) const {
    for (uint64_t nb = live[x].neighbours; nb;) {
      const int y = owner_[std::countr_zero(nb)];  // the live node holding that operand
      nb &= ~live[y].set;
      if (y >= below) continue;
      // Only a label both hold can leave (each side's labels are needed
      // outside it), so the result's size comes from the few shared labels
      // rather than a walk over all of them (sizes are products of whole
      // numbers: exact below 2^53, and only rounded beyond, far below the noise).
      const LabelSet shared = live[x].idx & live[y].idx;
      const LabelSet gone = shared - lv_.keep(live[x].set | live[y].set, shared);
      const Network& net = lv_.net();
      const double result = live[x].size * live[y].size / (net.size_of(shared) * net.size_of(gone));
      out.push_back({result, live[x].size + live[y].size, y, x});
    }
  }

  // A pair with its score drawn, its noise included.
  Queued scored(const Pair& p) {
    const double score = p.result - costmod_ * p.sides;
    return {score - temperature_ * std::max(1.0, std::abs(score)) * rng_->gumbel(), p.a, p.b};
  }
  // Scores a pair and queues it.
  void queue(const Pair& p) {
    pairs_.push_back(scored(p));
    std::push_heap(pairs_.begin(), pairs_.end(), Later{});
  }

  // The heap's order: the best (least) score on top (a type, so that the
  // heap's calls inline it).
  struct Later {
    bool operator()(const Queued& x, const Queued& y) const { return x.score > y.score; }
  };

  // The best-scored pair of live nodes; false when none is left. Scores
  // never change once drawn, so the pairs wait in a heap and a pair whose
  // side has gone is dropped when it comes up.
  bool cheapest_pair(int& a, int& b) {
    while (!pairs_.empty()) {
      std::pop_heap(pairs_.begin(), pairs_.end(), Later{});
      const Queued p = pairs_.back();
      pairs_.pop_back();
      if (!live_[p.a].alive || !live_[p.b].alive) continue;
      a = p.a;
      b = p.b;
      return true;
    }
    return false;
  }

  void smallest_two(int& a, int& b) const {
    a = b = -1;
    for (int i = 0; i < static_cast<int>(live_.size()); ++i) {
      if (!live_[i].alive) continue;
      if (a < 0 || live_[i].size < live_[a].size) {
        b = a;
        a = i;
      } else if (b < 0 || live_[i].size < live_[b].size) {
        b = i;
      }
    }
  }

  int join(int a, int b, Tree& tree, double& cost) {
    const Live& x = live_[a];
    const Live& y = live_[b];
    const uint64_t set = x.set | y.set;
    const Network& net = lv_.net();
    // As pairs_of(): only shared labels can leave.
    const LabelSet shared = x.idx & y.idx;
    const LabelSet removed = shared - lv_.keep(set, shared);
    const LabelSet r = (x.idx | y.idx) - removed;
    const double shared_size = net.size_of(shared);
    Join j;
    auto reducible = [&](const Live& l) { return !(l.set & (l.set - 1)) && !(net.inputs[std::countr_zero(l.set)] == l.idx); };
    if (reducible(x) || reducible(y))
      j = pair_cost(lv_, x.set, x.idx, y.set, y.idx, r);
    else  // Note [Einsum cost model]: both sides' labels, twice when one is summed
      j.cost = x.size * y.size / shared_size * (removed.empty() ? 1 : 2);
    cost += j.cost;
    const Live made{set, (x.neighbours | y.neighbours) & ~set, r, x.size * y.size / (shared_size * net.size_of(removed)), true};
    live_[a].alive = live_[b].alive = false;
    live_.push_back(made);
    for (uint64_t s = set; s; s &= s - 1) owner_[std::countr_zero(s)] = static_cast<int>(live_.size()) - 1;
    tree.nodes.push_back({set, a, b, j.reduce_a, j.reduce_b});
    return static_cast<int>(live_.size()) - 1;
  }

  const Leaves& lv_;
  std::vector<Live> leaves_, live_;  // live_: the tree's nodes, in the same order
  std::vector<Pair> first_pairs_, fresh_;
  std::vector<Queued> pairs_;  // a heap
  std::vector<int> owner_;  // per operand: the live node holding it
  Draws* rng_ = nullptr;
  double costmod_ = 1, temperature_ = 0;
};

}  // namespace

Path improve_subtrees(const Network& net, const Path& path, int window) {
  if (net.limited()) return path;
  std::optional<Tree> tree = path_to_tree(net, path);
  if (!tree) return path;
  const Leaves lv(net);
  JoinCosts join(lv, *tree);
  const auto scratch = std::make_unique<Subsets>();
  improve_tree(lv, *tree, join, *scratch, window, Opening::costliest);
  Path improved = tree_to_path(*tree, net.size());
  return cost_of(net, improved) <= cost_of(net, path) ? improved : path;
}

Found auto_path(const Network& net) {
  const int n = net.size();
  if (n <= 4) return {optimal_path(net), "optimal"};
  // opt_einsum's own choice for this many operands.
  Found best = n <= 6 ? Found{branch_path(net, 0), "branch-all"}
             : n <= 8 ? Found{branch_path(net, 2), "branch-2"}
             : n <= 14 ? Found{branch_path(net, 1), "branch-1"}
                       : Found{greedy_path(net), "greedy"};
  double best_cost = cost_of(net, best.path);
  auto consider = [&](Path p, std::string how) {
    const double c = cost_of(net, p);
    if (c < best_cost) best = {std::move(p), std::move(how)}, best_cost = c;
  };
  if (n <= kDpMaxOperands)
    if (std::optional<Path> dp = dp_path(net, kDpBudget)) {
      consider(std::move(*dp), "dp");
      return best;
    }
  std::optional<Tree> start = net.limited() ? std::nullopt : path_to_tree(net, best.path);
  if (!start) return best;  // a memory limit, or a path with a multi-way step
  const Leaves lv(net);
  // The cheapest of that path, the sampled ones and the pool's tree
  // (Note [Pooled trees] in path_pool.h), its subtrees re-planned.
  Tree tree = std::move(*start), trial;
  double cost = best_cost, trial_cost = 0;
  std::string how = best.how;
  SetPool pool(lv);
  pool.add_tree(tree);
  Tree first = tree;
  SampledGreedy sampler(lv);
  Draws rng(kSeed);
  for (int i = 0; i < kTrials; ++i) {
    const double costmod = rng.uniform(1.0, 4.0), temperature = std::exp(rng.uniform(std::log(0.1), std::log(0.3)));
    const bool cheaper = sampler.run(rng, costmod, temperature, cost, trial, trial_cost);
    pool.add_tree(trial);  // what it joined before it got too costly too
    if (cheaper) {
      std::swap(tree, trial);
      cost = trial_cost;
      how = "sampled greedy";
    }
  }
  CutTrees cuts(lv);
  for (int i = 0; i < kCutTrees; ++i) cuts.add_tree(pool, rng, rng.uniform(0, kMaxImbalance));
  Tree pooled;
  double pooled_cost = 0;
  if (pool.solve(pooled, pooled_cost, false, cost) && pooled_cost < cost * (1 - 1e-12)) {
    tree = std::move(pooled);
    how = "pooled trees";
  }
  const auto scratch = std::make_unique<Subsets>();
  // The first round on opt_einsum's path too, unless it is far costlier:
  // the cheapest tree before re-planning is not always the cheapest after.
  auto first_round = [&](Tree& t) {
    JoinCosts join(lv, t);
    improve_tree(lv, t, join, *scratch, kWindow, Opening::costliest, kLeast);
    pool.add_tree(t);
  };
  if (how != best.how && best_cost < kAlsoReplan * cost) first_round(first);
  first_round(tree);
  // The pool's cheapest tree, then the unions of sets on its cheapest trees
  // and the cheapest tree again (Note [Pool unions] in path_pool.h).
  double tree_cost = cost_of(net, tree_to_path(tree, n));
  // Sets on no tree within kUnionReach of it take no part (Note [Bounded
  // solve] in path_pool.h); the last solve looks for a cheaper tree only.
  if (pool.solve(pooled, pooled_cost, true, kUnionReach * tree_cost)) {
    if (pooled_cost < tree_cost * (1 - 1e-12)) {
      tree = pooled;
      tree_cost = pooled_cost;
      how = "pooled trees";
    }
    if (pool.add_unions(tree_cost, kUnionReach, kUnions, kChains) > 0 && pool.solve(pooled, pooled_cost, false, tree_cost) &&
        pooled_cost < tree_cost * (1 - 1e-12)) {
      tree = std::move(pooled);
      how = "pooled unions";
    }
  }
  JoinCosts join(lv, tree);
  improve_tree(lv, tree, join, *scratch, kOtherWindow, Opening::largest_intermediate, kLeast);
  // Subtrees moved where no window reaches (Note [Subtree moves]).
  SubtreeMoves moves(lv, tree, join);
  for (int i = 0; i < kMoves && moves.improve(); ++i) {}
  // The region at the root exactly, from kManyOperands operands, what its
  // dp took coming out of the random rounds' budget (Note [Top region dp]).
  // The same for the subtree that holds most of the cost, when dp can plan
  // it whole, within what the first left of kTopJoins.
  int64_t work = kRandomWork;
  if (n >= kManyOperands) {
    int64_t top = 0, whole = 0;
    replan_exact(lv, tree, join, tree.root, kTopPieces, kTopJoins, top);
    const int v = heavy_subtree(tree, join, kTopPieces, kWholeShare);
    if (v >= 0 && top < kTopJoins) replan_exact(lv, tree, join, v, kTopPieces, std::min(kWholeJoins, kTopJoins - top), whole);
    work -= kTopJoinWork * (top + whole);
  }
  // Then windows opened at random (Note [Random openings]).
  const int rounds = n < kManyOperands ? kRandomRounds : kRandomRoundsMany;
  for (int r = 0; r < rounds && work > 0; ++r) {
    const bool wide = r % 2 == 1;
    improve_tree(lv, tree, join, *scratch, wide ? kWideWindow : kOtherWindow, Opening::random,
                 wide ? kWideLeast : kRandomLeast, &rng, &work);
  }
  consider(tree_to_path(tree, n), how + " + subtree dp");
  return best;
}

}  // namespace bp::ops::einsum
