#pragma once
// The contraction-path problem and opt_einsum's cost model.
//
// Note [Einsum networks]
// A path search sees an einsum as a network: one label set per operand
// (a repeated label counts once: its diagonal is a view), the output's
// label set and the size of every label (a label that is 1 in one operand
// and n in another has size n, as in opt_einsum). A path is opt_einsum's
// linear format: each step names positions in the current operand list,
// those operands leave the list and their result is appended at its end.
// A step of one operand sums the labels nothing else needs; a step of
// more than two is one multi-way contraction (opt_einsum's answer when a
// memory limit leaves no pairwise step).
//
// Note [Einsum cost model]
// opt_einsum's, so our costs compare with its reports number for number.
// A step over operands T1..Tk whose labels together are C produces the
// labels of C that the output or another remaining operand needs (R); it
// costs size(C) * (max(1, k - 1) + (C - R non-empty ? 1 : 0)) FLOPs and
// its intermediate has size(R) elements. A path costs the sum of its steps;
// "naive" is one step over every operand, counted opt_einsum's way (an
// inner product whenever some label is shared by two operands). Sizes are
// doubles: a 30-operand network overflows 64-bit integers.

#include <cstdint>
#include <string>
#include <vector>

#include "ops/einsum/labels.h"

namespace bp::ops::einsum {

struct Network {
  std::vector<LabelSet> inputs;
  LabelSet output;
  std::vector<double> sizes;  // per label
  double memory_limit = -1;   // most elements an intermediate may have; < 0: no limit

  int size() const { return static_cast<int>(inputs.size()); }
  double size_of(LabelSet s) const {
    double out = 1;
    s.for_each([&](int l) { out *= sizes[static_cast<std::size_t>(l)]; });
    return out;
  }
  bool limited() const { return memory_limit >= 0; }
};

using Path = std::vector<std::vector<int>>;

// The cost of one step (Note [Einsum cost model]).
inline double flop_count(const Network& net, LabelSet labels, bool inner, int terms) {
  return net.size_of(labels) * ((terms > 1 ? terms - 1 : 1) + (inner ? 1 : 0));
}

struct Step {
  std::vector<int> operands;   // positions in the list before the step (as given)
  LabelSet contracted;         // every label of its operands
  LabelSet removed;            // summed away here
  LabelSet result;             // the intermediate's labels
  double cost = 0, size = 0;   // FLOPs, intermediate elements
  int scaling = 0;             // labels involved
};

struct Costs {
  double naive_cost = 0, opt_cost = 0, largest_intermediate = 1;
  int naive_scaling = 0, opt_scaling = 0;
  std::vector<Step> steps;
};

// The costs of `path` on `net`. ValueError naming `subject` when the path
// is not a path of this network (a position out of range or repeated, or
// operands left over at the end).
Costs evaluate(const Network& net, const Path& path, const std::string& subject = "einsum path");

// "[(0, 1), (0, 1)]", as Python prints a list of tuples.
std::string path_text(const Path& path);

}  // namespace bp::ops::einsum
