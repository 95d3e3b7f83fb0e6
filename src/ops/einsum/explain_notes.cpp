// The path the path implementation follows, and the notes explain shows
// for an einsum call: the path, its costs and how each step runs.

#include <cstdio>

#include "backplane/flags.h"
#include "ops/einsum/contract.h"
#include "ops/einsum/params.h"

namespace bp::ops::einsum {

Chosen chosen_path(const Params& p) {
  const int n = p.network.size();
  if (n <= 2) return {cached_path(p.network, Strategy::left_to_right), n == 1 ? "one operand" : "two operands: one step"};
  if (!backends::opt_einsum::enabled())
    return {cached_path(p.network, Strategy::left_to_right), "opt_einsum.enabled = False: left to right, as PyTorch"};
  const Strategy s = strategy_of(backends::opt_einsum::strategy());
  auto found = cached_path(p.network, s);
  return {found, std::string("opt_einsum.strategy = '") + strategy_name(s) + "': " + found->how};
}

std::vector<std::string> path_notes(const Params& p) {
  std::vector<std::string> notes;
  for (int64_t size : p.eq.sizes)
    if (size == 0) return {"einsum '" + p.eq.text + "': a label of size 0, so the result is zeros (nothing runs)"};
  const Chosen c = chosen_path(p);
  const Costs costs = evaluate(p.network, c.found->path);
  char buf[160];
  std::snprintf(buf, sizeof buf, "naive cost %.3e FLOPs, path cost %.3e (speedup %.3g), largest intermediate %.3e elements",
                costs.naive_cost, costs.opt_cost, costs.naive_cost / std::max(costs.opt_cost, 1.0),
                costs.largest_intermediate);
  notes.push_back("einsum '" + p.eq.text + "' (" + p.eq.canonical() + "), path:matmul follows " +
                  path_text(c.found->path) + " (" + c.why + "); " + buf);
  for (std::string& line : describe_path(p, c.found->path)) notes.push_back(std::move(line));
  notes.push_back("ref:any contracts left to right in float64 loops, without matmul");
  return notes;
}

}  // namespace bp::ops::einsum
