// einsum_contract_path(): opt_einsum.contract_path's path and report,
// natively (backplane/ops/einsum.h), and the path cache's public face.

#include <algorithm>
#include <cstdio>

#include "backplane/error.h"
#include "backplane/ops/einsum.h"
#include "ops/einsum/equation.h"
#include "ops/einsum/paths.h"

namespace bp {
namespace {

using namespace ops::einsum;

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// How the path implementation runs a step (Note [Einsum execution]).
std::string how_of(const Network& net, const std::vector<LabelSet>& parts, const Step& s) {
  if (parts.size() == 1) return s.removed.empty() ? "view" : "loops";
  if (parts.size() > 2) return "pairwise";
  const LabelSet shared = parts[0] & parts[1];
  const LabelSet contracted = shared & s.removed;
  const double m = net.size_of(parts[0] - shared), n = net.size_of(parts[1] - shared);
  return !contracted.empty() && (m > 1 || n > 1) ? "matmul" : "loops";
}

}  // namespace

EinsumPath einsum_contract_path(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes,
                                const EinsumPathOptions& options) {
  std::vector<Shape> sh(shapes.begin(), shapes.end());
  const Equation eq = parse_equation(equation, sh);
  Network net = eq.network();
  if (options.memory_limit_max_input) {
    double biggest = net.size_of(net.output);
    for (LabelSet s : net.inputs) biggest = std::max(biggest, net.size_of(s));
    net.memory_limit = biggest;
  } else {
    net.memory_limit = options.memory_limit;
  }
  EinsumPath out;
  if (!options.path.empty()) {
    out.path = options.path;
    out.strategy = "explicit path";
  } else if (options.optimize == "none") {
    std::vector<int> all(static_cast<std::size_t>(net.size()));
    for (int i = 0; i < net.size(); ++i) all[i] = i;
    out.path = {all};
    out.strategy = "none";
  } else {
    const Strategy s = parse_strategy(options.optimize, "einsum contract_path optimize");
    const auto found = cached_path(net, s);
    out.path = found->path;
    out.strategy = s == Strategy::automatic ? "auto: " + found->how : found->how;
  }
  const Costs c = evaluate(net, out.path, "einsum contract_path path");

  std::vector<std::string> terms;
  std::vector<LabelSet> sets = net.inputs;
  for (const auto& labels : eq.operand_labels) terms.push_back(eq.subscripts(labels));
  for (std::size_t k = 0; k < terms.size(); ++k) out.input_subscripts += (k ? "," : "") + terms[k];
  out.output_subscript = eq.subscripts(eq.output);
  out.shapes = shapes;
  out.naive_scaling = c.naive_scaling;
  out.optimized_scaling = c.opt_scaling;
  out.naive_cost = c.naive_cost;
  out.opt_cost = c.opt_cost;
  out.speedup = c.naive_cost / std::max(c.opt_cost, 1.0);
  out.largest_intermediate = c.largest_intermediate;
  for (std::size_t i = 0; options.report && i < c.steps.size(); ++i) {
    const Step& s = c.steps[i];
    EinsumPathStep step;
    step.operands = s.operands;
    std::vector<int> order = s.operands;
    std::sort(order.rbegin(), order.rend());  // taken right to left, as opt_einsum
    std::vector<std::string> inputs;
    std::vector<LabelSet> parts;
    for (int pos : order) {
      inputs.push_back(terms[pos]);
      parts.push_back(sets[pos]);
      terms.erase(terms.begin() + pos);
      sets.erase(sets.begin() + pos);
    }
    std::string result;
    if (i + 1 == c.steps.size()) {
      result = out.output_subscript;
    } else {  // in order of first appearance among the inputs (fewest transposes), as opt_einsum
      std::string joined;
      for (const std::string& t : inputs) joined += t;
      std::vector<int> labels;
      s.result.for_each([&](int l) { labels.push_back(l); });
      std::stable_sort(labels.begin(), labels.end(),
                       [&](int a, int b) { return joined.find(eq.names[a]) < joined.find(eq.names[b]); });
      result = eq.subscripts(labels);
    }
    for (std::size_t k = 0; k < inputs.size(); ++k) step.einsum += (k ? "," : "") + inputs[k];
    step.einsum += "->" + result;
    step.how = how_of(net, parts, s);
    terms.push_back(result);
    sets.push_back(s.result);
    if (terms.size() <= 20) step.remaining = terms;
    s.removed.for_each([&](int l) { step.removed += eq.names[l]; });
    step.scaling = s.scaling;
    step.cost = s.cost;
    step.size = s.size;
    out.steps.push_back(std::move(step));
  }
  return out;
}

std::string EinsumPath::text() const {
  const std::string eq = input_subscripts + "->" + output_subscript;
  std::string out = "  Complete contraction:  " + eq + "\n";
  out += "         Naive scaling:  " + std::to_string(naive_scaling) + "\n";
  out += "     Optimized scaling:  " + std::to_string(optimized_scaling) + "\n";
  out += "      Naive FLOP count:  " + sci(naive_cost) + "\n";
  out += "  Optimized FLOP count:  " + sci(opt_cost) + "\n";
  out += "   Theoretical speedup:  " + sci(speedup) + "\n";
  out += "  Largest intermediate:  " + sci(largest_intermediate) + " elements\n";
  out += std::string(80, '-') + "\n";
  out += pad_left("scaling", 6) + " " + pad_left("BLAS", 11) + " " + pad_left("current", 22) + " " +
         pad_left("remaining", 37) + "\n";
  out += std::string(80, '-');
  for (const EinsumPathStep& s : steps) {
    std::string remaining = "...";
    if (!s.remaining.empty()) {
      remaining.clear();
      for (std::size_t k = 0; k < s.remaining.size(); ++k) remaining += (k ? "," : "") + s.remaining[k];
      remaining += "->" + output_subscript;
    }
    const std::size_t width = static_cast<std::size_t>(std::max<long>(0, 56 - std::max<long>(22, static_cast<long>(s.einsum.size()))));
    out += "\n" + pad_left(std::to_string(s.scaling), 4) + " " + pad_left(s.how, 14) + " " + pad_left(s.einsum, 22) +
           "    " + pad_left(remaining, width);
  }
  return out;
}

EinsumPathCacheInfo einsum_path_cache_info() {
  const path_cache::Info i = path_cache::info();
  return {i.size, i.max_size, i.hits, i.misses};
}
void einsum_path_cache_clear() { path_cache::clear(); }
void einsum_path_cache_set_max_size(int64_t max_size) { path_cache::set_max_size(max_size); }

}  // namespace bp
