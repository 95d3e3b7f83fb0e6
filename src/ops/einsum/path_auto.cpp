// "auto", and the subtree re-planning it uses on networks too big for dp
// (paths.h).
//
// opt_einsum's auto picks one optimiser by operand count (optimal up to 4,
// branch-all up to 6, branch-2 up to 8, branch-1 up to 14, greedy
// beyond). Native searches are cheap enough to do better at the same
// speed: up to 4 operands the exact optimum; beyond, that same choice,
// then dp within a budget of joins (up to 24 operands), or, where dp would
// take too long, that path with every subtree of up to kWindow pieces
// re-planned exactly, the costliest joins opened up first;
// the cheapest path wins. So auto is never costlier than opt_einsum's
// auto, and matches dp wherever dp fits the budget.

#include <bit>
#include <functional>
#include <limits>

#include "ops/einsum/paths.h"
#include "ops/einsum/tree.h"

namespace bp::ops::einsum {
namespace {

constexpr int64_t kDpBudget = 4000;  // joins: a few hundred microseconds
constexpr int kDpMaxOperands = 24;   // beyond, dp rarely fits the budget: go straight to re-planning
constexpr int kWindow = 6;

constexpr double kInf = std::numeric_limits<double>::infinity();

// The cost of the join at an internal node.
double node_cost(const Leaves& lv, const Tree& t, int v) {
  const Tree::Node& n = t.nodes[v];
  const uint64_t a = t.nodes[n.left].set, b = t.nodes[n.right].set;
  return pair_cost(lv, a, lv.idx(a), b, lv.idx(b), lv.idx(n.set)).cost;
}

// Re-plans the region below node v, cut at up to `window` pieces; true when it got cheaper.
bool replan(const Leaves& lv, Tree& t, int v, int window) {
  std::vector<int> pieces = {t.nodes[v].left, t.nodes[v].right}, region = {v};
  // Open up the costliest join below first: that is where re-planning pays.
  std::vector<double> join_cost;
  for (int u : pieces) join_cost.push_back(t.nodes[u].left >= 0 ? node_cost(lv, t, u) : -1);
  while (static_cast<int>(pieces.size()) < window) {
    int widest = -1;
    for (std::size_t i = 0; i < pieces.size(); ++i)
      if (join_cost[i] >= 0 && (widest < 0 || join_cost[i] > join_cost[widest])) widest = static_cast<int>(i);
    if (widest < 0) break;
    const int u = pieces[widest];
    const int l = t.nodes[u].left, r = t.nodes[u].right;
    join_cost[widest] = t.nodes[l].left >= 0 ? node_cost(lv, t, l) : -1;
    join_cost.push_back(t.nodes[r].left >= 0 ? node_cost(lv, t, r) : -1);
    region.push_back(u);
    pieces[widest] = t.nodes[u].left;
    pieces.push_back(t.nodes[u].right);
  }
  if (pieces.size() < 3) return false;
  double current = 0;
  for (int u : region) current += node_cost(lv, t, u);

  const int k = static_cast<int>(pieces.size());
  const std::size_t count = std::size_t{1} << k;
  std::vector<uint64_t> sets(count, 0);
  std::vector<LabelSet> idx(count);
  std::vector<double> cost(count, kInf);
  std::vector<uint32_t> split(count, 0);
  std::vector<uint8_t> reduce(count, 0);
  for (std::size_t m = 1; m < count; ++m) {
    sets[m] = sets[m & (m - 1)] | t.nodes[pieces[std::countr_zero(m)]].set;
    idx[m] = lv.idx(sets[m]);
  }
  for (int i = 0; i < k; ++i) cost[std::size_t{1} << i] = 0;
  for (std::size_t m = 1; m < count; ++m) {
    if (std::popcount(m) < 2) continue;
    const std::size_t low = m & (~m + 1);
    for (std::size_t a = (m - 1) & m; a; a = (a - 1) & m) {
      if (!(a & low)) continue;
      const std::size_t b = m ^ a;
      const Join j = pair_cost(lv, sets[a], idx[a], sets[b], idx[b], idx[m]);
      const double c = cost[a] + cost[b] + j.cost;
      if (c < cost[m]) {
        cost[m] = c;
        split[m] = static_cast<uint32_t>(a);
        reduce[m] = static_cast<uint8_t>(j.reduce_a | (j.reduce_b << 1));
      }
    }
  }
  const std::size_t full = count - 1;
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
  return true;
}

double cost_of(const Network& net, const Path& p) { return evaluate(net, p).opt_cost; }

}  // namespace

Path improve_subtrees(const Network& net, const Path& path, int window) {
  if (net.limited()) return path;
  std::optional<Tree> tree = path_to_tree(net, path);
  if (!tree) return path;
  Tree& t = *tree;
  const Leaves lv(net);
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<int> order;  // post-order: children first
    std::function<void(int)> walk = [&](int v) {
      if (t.nodes[v].left < 0) return;
      walk(t.nodes[v].left);
      walk(t.nodes[v].right);
      order.push_back(v);
    };
    walk(t.root);
    bool changed = false;
    for (int v : order) changed = replan(lv, t, v, window) || changed;
    if (!changed) break;
  }
  Path improved = tree_to_path(t, net.size());
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
  std::optional<Path> dp;
  if (n <= kDpMaxOperands) dp = dp_path(net, kDpBudget);
  if (dp) {
    consider(std::move(*dp), "dp");
  } else {
    const Path start = best.path;
    consider(improve_subtrees(net, start, kWindow), best.how + " + subtree dp");
  }
  return best;
}

}  // namespace bp::ops::einsum
