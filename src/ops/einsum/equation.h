#pragma once
// einsum equations: parsing, bound to the operands' shapes, with errors
// that name the position in the equation (torch.einsum's rules).
//
// Note [Einsum labels]
// Every letter of an equation is a label, numbered in order of first
// appearance; the dimensions an ellipsis covers are labels too, numbered
// after the letters (right-aligned across operands, broadcast as NumPy
// broadcasts). A label repeated in one operand is that operand's diagonal;
// a label whose size is 1 in one operand and n in another broadcasts to n.
// Without '->' the output is the ellipsis dimensions, then the letters used
// exactly once, in alphabetical order (A-Z before a-z). With '->', the
// ellipsis dimensions the output does not name are summed (as PyTorch;
// NumPy refuses them).

#include <optional>
#include <string>
#include <vector>

#include "backplane/tensor.h"
#include "ops/einsum/network.h"

namespace bp::ops::einsum {

struct Equation {
  std::string text;                              // as given
  std::vector<std::vector<int>> operand_labels;  // per operand, per dimension
  std::vector<int> output;                       // per output dimension
  std::vector<int64_t> sizes;                    // per label
  std::vector<std::string> names;                // per label: its letter, or a free one for ellipsis dimensions

  int labels() const { return static_cast<int>(sizes.size()); }
  Shape output_shape() const;
  // "ij", the names of some labels, joined.
  std::string subscripts(const std::vector<int>& labels) const;
  // "ij,jk->ik", with the ellipsis spelt out in label names.
  std::string canonical() const;
  // The path search's view (Note [Einsum networks]).
  Network network() const;
};

// Parses `text` for operands of these shapes. ValueError "einsum: expected
// ..., got ..." naming the position in the equation, or the operand.
Equation parse_equation(const std::string& text, const std::vector<Shape>& shapes);

// torch.einsum's sublist form as an equation: ints in [0, 52) are A-Z then
// a-z, ops::kEllipsis is '...'. ValueError naming the operand otherwise.
std::string sublist_equation(const std::vector<std::vector<int64_t>>& sublists,
                             const std::optional<std::vector<int64_t>>& output);

}  // namespace bp::ops::einsum
