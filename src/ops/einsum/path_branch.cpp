// "branch-1", "branch-2", "branch-all": depth-first branch and bound, as
// opt_einsum's BranchBound (paths.h). At each step the pairs that share a
// label (every pair when none does) are ranked by the memory they free,
// then their cost, and the best N are explored (all for branch-all). A
// branch ends when it cannot beat the best path found (FLOPs, then the
// largest intermediate), or when it is 4 times costlier than the best
// branch seen at the same depth. Over a memory limit a branch ends with
// one step over everything left.
//
// opt_einsum ranks and bounds with an estimate of each step's cost (an
// inner product only when a shared label goes); we search with that
// estimate and with exact costs and keep the cheaper path, so that ours is
// never costlier for a difference in bookkeeping. The exhaustive search
// (every pair, outer products included, no cut-off) is opt_einsum's
// optimal: "optimal" falls back to it when a memory limit leaves no
// pairwise path, since it may end a path with one step over what is left.
// branch-1 and branch-2 finish by re-planning each subtree of up to 4
// pieces exactly (improve_subtrees).

#include <algorithm>
#include <limits>

#include "ops/einsum/paths.h"
#include "ops/einsum/tree.h"

namespace bp::ops::einsum {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kCutoffFactor = 4;
constexpr int kPolishWindow = 4;

struct Mode {
  int nbranch = 0;         // 0: all
  bool estimate = false;   // opt_einsum's cost estimate instead of exact costs
  bool exhaustive = false; // every pair always, no cut-off (opt_einsum's optimal)
};

class Branch {
 public:
  Branch(const Network& net, Mode mode) : net_(net), mode_(mode), nbranch_(mode.nbranch), tensors_(net.inputs) {}

  Path run() {
    std::vector<int> remaining(static_cast<std::size_t>(net_.size()));
    for (int i = 0; i < net_.size(); ++i) remaining[i] = i;
    std::vector<std::vector<int>> path;
    iterate(remaining, path, 0, 0);
    return ssa_to_linear(best_path_, net_.size());
  }

 private:
  struct Option {
    double heuristic, flops12, flops, size;
    int i, j;
    LabelSet k12;
    bool operator<(const Option& o) const {
      if (heuristic != o.heuristic) return heuristic < o.heuristic;
      if (flops12 != o.flops12) return flops12 < o.flops12;
      if (flops != o.flops) return flops < o.flops;
      if (size != o.size) return size < o.size;
      return i != o.i ? i < o.i : j < o.j;
    }
  };

  bool better(double flops, double size) const {
    return flops < best_flops_ || (flops == best_flops_ && size < best_size_);
  }

  void iterate(const std::vector<int>& remaining, std::vector<std::vector<int>>& path, double flops, double size) {
    if (remaining.size() == 1) {
      if (better(flops, size)) best_flops_ = flops, best_size_ = size, best_path_ = path;
      return;
    }
    const std::size_t depth = path.size();
    if (progress_.size() <= depth) progress_.resize(depth + 1, kInf);
    int count[kMaxLabels] = {};
    for (int t : remaining) tensors_[t].for_each([&](int l) { ++count[l]; });

    std::vector<Option> options;
    bool ended = false;  // a branch ended at the memory limit
    auto assess = [&](int i, int j) {
      const LabelSet ki = tensors_[i], kj = tensors_[j], either = ki | kj;
      LabelSet k12 = either & net_.output;
      (either - net_.output).for_each([&](int l) {
        if (count[l] - ki.has(l) - kj.has(l) > 0) k12.add(l);
      });
      const LabelSet gone = mode_.estimate ? (ki & kj) - k12 : either - k12;
      const double flops12 = flop_count(net_, either, !gone.empty(), 2);
      const double size12 = net_.size_of(k12);
      const double new_flops = flops + flops12, new_size = std::max(size, size12);
      if (!better(new_flops, new_size)) return;
      if (new_flops < progress_[depth]) progress_[depth] = new_flops;
      else if (!mode_.exhaustive && new_flops > kCutoffFactor * progress_[depth]) return;
      if (net_.limited() && size12 > net_.memory_limit) {
        LabelSet all;
        for (int t : remaining) all |= tensors_[t];
        const double total = flops + flop_count(net_, all, !(all - net_.output).empty(), static_cast<int>(remaining.size()));
        if (total < best_flops_) {
          best_flops_ = total;
          best_path_ = path;
          best_path_.push_back(remaining);
        }
        ended = true;
        return;
      }
      const double heuristic = size12 - net_.size_of(ki) - net_.size_of(kj);
      options.push_back({heuristic, flops12, new_flops, new_size, i, j, k12});
    };
    for (std::size_t a = 0; a < remaining.size(); ++a)
      for (std::size_t b = a + 1; b < remaining.size(); ++b)
        if (mode_.exhaustive || tensors_[remaining[a]].intersects(tensors_[remaining[b]]))
          assess(remaining[a], remaining[b]);
    if (options.empty() && !ended)  // nothing shares a label: outer products
      for (std::size_t a = 0; a < remaining.size(); ++a)
        for (std::size_t b = a + 1; b < remaining.size(); ++b) assess(remaining[a], remaining[b]);
    std::sort(options.begin(), options.end());
    const std::size_t take = nbranch_ == 0 ? options.size() : std::min<std::size_t>(options.size(), nbranch_);
    for (std::size_t k = 0; k < take; ++k) {
      const Option& o = options[k];
      std::vector<int> next;
      for (int t : remaining)
        if (t != o.i && t != o.j) next.push_back(t);
      next.push_back(static_cast<int>(tensors_.size()));
      tensors_.push_back(o.k12);
      path.push_back({o.i, o.j});
      iterate(next, path, o.flops, o.size);
      path.pop_back();
      tensors_.pop_back();
    }
  }

  const Network& net_;
  Mode mode_;
  int nbranch_;
  std::vector<LabelSet> tensors_;  // by id: the inputs, then the intermediates of the current branch
  std::vector<double> progress_;   // best FLOPs seen at each depth
  double best_flops_ = kInf, best_size_ = kInf;
  std::vector<std::vector<int>> best_path_;
};

}  // namespace

namespace {

Path search(const Network& net, Mode mode) {
  Path p = Branch(net, mode).run();
  if (p.empty()) {  // only when every branch hit the cut-off: one step over everything
    std::vector<int> all(static_cast<std::size_t>(net.size()));
    for (int i = 0; i < net.size(); ++i) all[i] = i;
    p = {all};
  }
  return p;
}

}  // namespace

Path branch_path(const Network& net, int nbranch) {
  Path exact = search(net, {nbranch, false, false});
  Path estimated = search(net, {nbranch, true, false});
  Path best = evaluate(net, estimated).opt_cost < evaluate(net, exact).opt_cost ? estimated : exact;
  // The few-branch searches commit early; re-planning every small subtree
  // exactly repairs what that cost them (never costlier).
  return nbranch == 0 ? best : improve_subtrees(net, best, kPolishWindow);
}

Path exhaustive_path(const Network& net) { return search(net, {0, false, true}); }

}  // namespace bp::ops::einsum
