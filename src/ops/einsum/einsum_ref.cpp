// ref:any: the reference, written apart from the path code. It contracts
// the operands left to right, each pair (or the lone operand) in one plain
// loop nest over every label the two hold, in float64, summing a label as
// soon as no later operand and not the output has it. Repeated labels
// (diagonals) and size-1 broadcasting fall out of indexing each operand's
// own dimensions by label. It accepts every valid problem, so it is the
// list's last entry; its work is that of the left-to-right path.

#include <algorithm>

#include "backplane/dispatch_checks.h"
#include "ops/einsum/params.h"

namespace bp::ops::einsum {
namespace {

// An operand or intermediate: dense float64 values, a label per dimension
// (labels may repeat in an operand), the dimension sizes and strides.
struct Dense {
  std::vector<double> values;
  std::vector<int> labels;
  Shape shape, strides;

  double at(const std::vector<int64_t>& index) const {
    int64_t off = 0;
    for (std::size_t d = 0; d < labels.size(); ++d)
      if (shape[d] != 1) off += index[labels[d]] * strides[d];  // size 1: broadcast
    return values[static_cast<std::size_t>(off)];
  }
};

Dense dense_of(const Tensor& t, const std::vector<int>& labels) {
  Dense d;
  const Tensor c = t.to(DType::f64).contiguous();
  d.values.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  d.labels = labels;
  d.shape = t.shape();
  d.strides = contiguous_strides(d.shape);
  return d;
}

// Sums the product of `terms` over every label they hold, keeping `keep` (in this order).
Dense contract(const std::vector<const Dense*>& terms, const std::vector<int>& keep, const std::vector<int64_t>& sizes) {
  std::vector<int> all;
  for (const Dense* t : terms)
    for (int l : t->labels)
      if (std::find(all.begin(), all.end(), l) == all.end()) all.push_back(l);
  Dense out;
  out.labels = keep;
  for (int l : keep) out.shape.push_back(sizes[l]);
  out.strides = contiguous_strides(out.shape);
  int64_t count = 1;
  for (int64_t s : out.shape) count *= s;
  out.values.assign(static_cast<std::size_t>(count), 0.0);
  std::vector<int64_t> index(sizes.size(), 0);
  for (int l : all)
    if (sizes[l] == 0) return out;
  while (true) {
    double v = 1;
    for (const Dense* t : terms) v *= t->at(index);
    int64_t off = 0;
    for (std::size_t d = 0; d < keep.size(); ++d) off += index[keep[d]] * out.strides[d];
    out.values[static_cast<std::size_t>(off)] += v;
    std::size_t d = 0;  // odometer over `all`
    for (; d < all.size(); ++d) {
      if (++index[all[d]] < sizes[all[d]]) break;
      index[all[d]] = 0;
    }
    if (d == all.size()) return out;
  }
}

void run(const Params& p) {
  const Equation& eq = p.eq;
  const std::size_t n = p.operands.size();
  std::vector<Dense> terms;
  for (std::size_t k = 0; k < n; ++k) terms.push_back(dense_of(p.operands[k], eq.operand_labels[k]));
  // What must survive once the first k + 1 operands are folded together.
  auto needed = [&](std::size_t k) {
    std::vector<int> keep;
    auto add = [&](int l) {
      if (std::find(keep.begin(), keep.end(), l) == keep.end()) keep.push_back(l);
    };
    for (std::size_t j = 0; j <= k; ++j)
      for (int l : terms[j].labels) {
        bool later = std::find(eq.output.begin(), eq.output.end(), l) != eq.output.end();
        for (std::size_t i = k + 1; i < n && !later; ++i)
          later = std::find(eq.operand_labels[i].begin(), eq.operand_labels[i].end(), l) != eq.operand_labels[i].end();
        if (later) add(l);
      }
    return keep;
  };
  Dense acc = contract({&terms[0]}, needed(0), eq.sizes);
  for (std::size_t k = 1; k < n; ++k) acc = contract({&acc, &terms[k]}, needed(k), eq.sizes);
  // acc holds the output labels in some order: write them out in the output's.
  const Shape shape = eq.output_shape();
  Tensor out = Tensor::empty(shape, DType::f64);
  double* o = out.data_ptr<double>();
  std::vector<int64_t> index(eq.sizes.size(), 0);
  int64_t count = 1;
  for (int64_t s : shape) count *= s;
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i;
    for (std::size_t d = eq.output.size(); d-- > 0;) {
      index[eq.output[d]] = rest % shape[d];
      rest /= shape[d];
    }
    o[i] = acc.at(index);
  }
  *p.result = out.to(p.dtype);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_ref() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", dispatch::Properties{}, std::move(checks), run);
}

}  // namespace bp::ops::einsum
