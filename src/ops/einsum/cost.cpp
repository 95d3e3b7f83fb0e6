// Costs of a contraction path (Note [Einsum cost model] in network.h).

#include <algorithm>

#include "backplane/error.h"
#include "ops/einsum/network.h"

namespace bp::ops::einsum {

Costs evaluate(const Network& net, const Path& path, const std::string& subject) {
  Costs c;
  LabelSet all;
  int label_uses = 0;
  for (LabelSet s : net.inputs) {
    all |= s;
    label_uses += s.count();
  }
  c.naive_scaling = all.count();
  c.naive_cost = flop_count(net, all, label_uses > all.count(), net.size());

  std::vector<LabelSet> list = net.inputs;
  for (const std::vector<int>& positions : path) {
    const int n = static_cast<int>(list.size());
    std::vector<int> sorted = positions;
    std::sort(sorted.begin(), sorted.end());
    const bool unique = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
    if (positions.empty() || !unique || sorted.front() < 0 || sorted.back() >= n)
      throw_bad_value(subject, path_text(path),
                      "steps of distinct positions in the current list of " + std::to_string(n) + " operands");
    Step s;
    s.operands = positions;
    LabelSet keep = net.output;
    for (int i = 0, j = 0; i < n; ++i) {
      if (j < static_cast<int>(sorted.size()) && sorted[j] == i) {
        s.contracted |= list[i];
        ++j;
      } else {
        keep |= list[i];
      }
    }
    s.result = s.contracted & keep;
    s.removed = s.contracted - s.result;
    s.cost = flop_count(net, s.contracted, !s.removed.empty(), static_cast<int>(positions.size()));
    s.size = net.size_of(s.result);
    s.scaling = s.contracted.count();
    for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) list.erase(list.begin() + *it);
    list.push_back(s.result);
    c.opt_cost += s.cost;
    c.opt_scaling = std::max(c.opt_scaling, s.scaling);
    c.steps.push_back(std::move(s));
  }
  if (list.size() != 1 || path.empty())
    throw_bad_value(subject, path_text(path), "a path that leaves one operand (got " + std::to_string(list.size()) + ")");
  c.largest_intermediate = 1;
  for (const Step& s : c.steps) c.largest_intermediate = std::max(c.largest_intermediate, s.size);
  return c;
}

std::string path_text(const Path& path) {
  std::string out = "[";
  for (std::size_t i = 0; i < path.size(); ++i) {
    out += i ? ", (" : "(";
    for (std::size_t j = 0; j < path[i].size(); ++j) out += (j ? ", " : "") + std::to_string(path[i][j]);
    out += path[i].size() == 1 ? ",)" : ")";
  }
  return out + "]";
}

}  // namespace bp::ops::einsum
