#pragma once
// einsum: torch.einsum on bp::Tensor, contracting three or more operands
// along a path that Backplane's own optimiser finds (the strategies of
// backends.opt_einsum, no Python package needed), each pairwise step a
// batched matmul through the matmul op (docs/dispatch.md).
//
//   bp::Tensor c = bp::einsum("bij,bjk->bik", {a, b});
//   bp::Tensor t = bp::einsum("ab,bc,cd,de->ae", {w, x, y, z});
//   std::cout << bp::explain_einsum("ab,bc,cd->ad", {x, y, z}).text();   // path, costs, matmul decisions
//   bp::EinsumPath p = bp::einsum_contract_path("ab,bc,cd->ad", {{8, 64}, {64, 64}, {64, 2}});
//   std::cout << p.text();                                               // as opt_einsum.contract_path
//
// dtypes f32, f64, f16, bf16 (complex is not supported yet: matmul has no
// complex kernels). Bad input is a ValueError (also a RuntimeError in
// Python) naming the position in the equation or the operand.

#include <string>
#include <vector>

#include "backplane/dispatch.h"
#include "backplane/tensor.h"

namespace bp {

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
dispatch::Decision explain_einsum(const std::string& equation, const std::vector<Tensor>& operands);

// One step of a contraction path, as opt_einsum's contraction list has it.
struct EinsumPathStep {
  std::vector<int> operands;           // positions in the list before the step
  std::string removed;                 // the labels summed here
  std::string einsum;                  // "ij,jk->ik"
  std::vector<std::string> remaining;  // the list after the step (empty past 20 operands, as opt_einsum)
  std::string how;                     // how einsum runs it: "matmul", "loops" or "view"
  int scaling = 0;
  double cost = 0, size = 0;           // FLOPs, intermediate elements
};

// opt_einsum.contract_path's answer: the path and its report.
struct EinsumPath {
  std::vector<std::vector<int>> path;
  std::string strategy;  // what chose it: "greedy", "dp", "optimal", "auto: dp", "explicit path", ...
  std::string input_subscripts, output_subscript;
  std::vector<std::vector<int64_t>> shapes;
  int naive_scaling = 0, optimized_scaling = 0;
  double naive_cost = 0, opt_cost = 0, speedup = 1, largest_intermediate = 1;
  std::vector<EinsumPathStep> steps;
  // opt_einsum's PathInfo as text: complete contraction, scalings, FLOP
  // counts, speedup, largest intermediate, then one row per step.
  std::string text() const;
};

struct EinsumPathOptions {
  // A strategy (auto, greedy, optimal, dp, branch-1, branch-2, branch-all),
  // or "none": one step over every operand (opt_einsum's optimize=False).
  std::string optimize = "auto";
  std::vector<std::vector<int>> path;  // an explicit path to report on (then optimize is ignored)
  // Most elements an intermediate may have: < 0 none; "max_input" is the largest input or output.
  double memory_limit = -1;
  bool memory_limit_max_input = false;
  // false: only the path, strategy and costs (EinsumPath::steps stays empty).
  // The per-step report costs more than a greedy search itself, so the
  // Python PathInfo asks for it only when it is read.
  bool report = true;
};

// The path and report for an equation and operand shapes, through the path cache.
EinsumPath einsum_contract_path(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes,
                                const EinsumPathOptions& options = {});

// The path cache: one entry per (network, strategy), least recently used out first.
struct EinsumPathCacheInfo {
  int64_t size = 0, max_size = 0, hits = 0, misses = 0;
};
EinsumPathCacheInfo einsum_path_cache_info();
void einsum_path_cache_clear();
void einsum_path_cache_set_max_size(int64_t max_size);  // ValueError when negative

}  // namespace bp
