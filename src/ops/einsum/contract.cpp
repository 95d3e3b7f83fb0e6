// Carrying out and describing a contraction path (Note [Einsum execution]
// in contract.h).

#include "ops/einsum/contract.h"

#include <algorithm>
#include <numeric>

#include "backplane/ops/matmul.h"
#include "ops/einsum/contract_loops.h"

namespace bp::ops::einsum {
namespace {

// An operand on the way: a view with one dimension per label.
struct Term {
  Tensor t;
  std::vector<int> labels;
  bool fresh = false;  // made here, not a view of an operand

  LabelSet set() const {
    LabelSet s;
    for (int l : labels) s.add(l);
    return s;
  }
  int dim_of(int label) const {
    return static_cast<int>(std::find(labels.begin(), labels.end(), label) - labels.begin());
  }
  int64_t size_of(int label) const { return t.size(dim_of(label)); }
  int64_t stride_of(int label) const { return t.stride(dim_of(label)); }
};

int64_t product(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()); }

// Whether the dimensions of `labels`, in this order, merge into one.
bool mergeable(const Term& a, const std::vector<int>& labels) {
  for (std::size_t i = 0; i + 1 < labels.size(); ++i)
    if (a.stride_of(labels[i]) != a.stride_of(labels[i + 1]) * a.size_of(labels[i + 1])) return false;
  return true;
}

// `labels` by falling stride in `a`: the order in which they most likely merge.
std::vector<int> by_stride(const Term& a, std::vector<int> labels) {
  std::stable_sort(labels.begin(), labels.end(),
                   [&](int x, int y) { return a.stride_of(x) > a.stride_of(y); });
  return labels;
}

class Runner {
 public:
  Runner(const Params& p, bool describe) : p_(p), describe_(describe) {}

  Tensor run(const Path& path) {
    std::vector<Term> list;
    for (std::size_t k = 0; k < p_.operands.size(); ++k) list.push_back(input(k));
    for (std::size_t s = 0; s < path.size(); ++s) {
      std::vector<int> positions = path[s];
      std::vector<Term> taken;
      for (int pos : positions) taken.push_back(list[pos]);
      std::sort(positions.rbegin(), positions.rend());
      for (int pos : positions) list.erase(list.begin() + pos);
      LabelSet keep = p_.network.output;
      for (const Term& t : list) keep |= t.set();
      step_text_ = std::string();
      std::string head;
      for (std::size_t i = 0; i < taken.size(); ++i) head += (i ? "," : "") + p_.eq.subscripts(taken[i].labels);
      Term r = taken[0];
      if (taken.size() == 1) {
        r = reduce(r, keep);
      } else {
        for (std::size_t i = 1; i < taken.size(); ++i) {
          LabelSet later = keep;
          for (std::size_t j = i + 1; j < taken.size(); ++j) later |= taken[j].set();
          r = pair(r, taken[i], later);
        }
      }
      if (describe_)
        lines_.push_back("step " + std::to_string(s + 1) + ": " + head + "->" + p_.eq.subscripts(r.labels) + ": " +
                         (step_text_.empty() ? "nothing to compute (a view)" : step_text_));
      list.push_back(std::move(r));
    }
    return output(list.at(0));
  }

  std::vector<std::string> lines() const { return lines_; }

 private:
  void note(const std::string& s) { step_text_ += (step_text_.empty() ? "" : "; ") + s; }

  Tensor make(const Shape& shape) {
    if (!describe_) return Tensor::empty(shape, p_.dtype, p_.device);
    // A stand-in with the shape and strides a run would make, for explain:
    // nothing reads or writes its elements.
    const std::size_t bytes = static_cast<std::size_t>(std::max<int64_t>(product(shape), 1)) * dtype_itemsize(p_.dtype);
    auto storage = std::make_shared<Storage>(reinterpret_cast<void*>(uintptr_t{4096}), bytes, p_.device,
                                             std::function<void()>{});
    return Tensor::from_storage(storage, shape, contiguous_strides(shape), 0, p_.dtype);
  }

  // Operand k as a view with one dimension per label (Note [Einsum execution]).
  Term input(std::size_t k) {
    const Tensor& t = p_.operands[k];
    const std::vector<int>& labels = p_.eq.operand_labels[k];
    Term out;
    Shape shape, strides;
    for (std::size_t d = 0; d < labels.size(); ++d) {
      if (t.size(static_cast<int64_t>(d)) == 1) continue;
      const auto at = std::find(out.labels.begin(), out.labels.end(), labels[d]);
      if (at != out.labels.end()) {
        strides[at - out.labels.begin()] += t.stride(static_cast<int64_t>(d));  // a diagonal
        continue;
      }
      out.labels.push_back(labels[d]);
      shape.push_back(t.size(static_cast<int64_t>(d)));
      strides.push_back(t.stride(static_cast<int64_t>(d)));
    }
    out.t = Tensor::from_storage(t.storage(), shape, strides, t.storage_offset(), t.dtype());
    return out;
  }

  // The labels of `a` that `keep` names stay; the others are summed.
  Term reduce(const Term& a, LabelSet keep) {
    std::vector<int> kept, summed;
    for (int l : a.labels) (keep.has(l) ? kept : summed).push_back(l);
    if (summed.empty()) return a;
    note("sum " + p_.eq.subscripts(summed) + " of " + p_.eq.subscripts(a.labels) + " (loops)");
    return loops({&a}, kept, summed);
  }

  // out[labels] = sum over `summed` of the product of the sides.
  Term loops(const std::vector<const Term*>& sides, const std::vector<int>& labels, const std::vector<int>& summed) {
    Shape out_shape, sum_shape;
    auto size = [&](int l) {
      for (const Term* s : sides)
        if (s->set().has(l)) return s->size_of(l);
      return int64_t{1};
    };
    for (int l : labels) out_shape.push_back(size(l));
    for (int l : summed) sum_shape.push_back(size(l));
    Term r{make(out_shape), labels, true};
    if (!describe_) {
      std::vector<LoopSide> ls;
      for (const Term* s : sides) {
        LoopSide side{s->t.data(), {}, {}};
        const LabelSet has = s->set();
        for (int l : labels) side.out_strides.push_back(has.has(l) ? s->stride_of(l) : 0);
        for (int l : summed) side.sum_strides.push_back(has.has(l) ? s->stride_of(l) : 0);
        ls.push_back(std::move(side));
      }
      contract_loops(ls, out_shape, sum_shape, r.t);
    }
    return r;
  }

  // Where the first label of `t` that `other` lacks sits in the output (past its end if none).
  std::size_t output_rank(const Term& t, LabelSet other) const {
    const std::vector<int>& out = p_.eq.output;
    std::size_t best = out.size();
    for (int l : t.labels)
      if (!other.has(l)) best = std::min<std::size_t>(best, std::find(out.begin(), out.end(), l) - out.begin());
    return best;
  }

  Term pair(Term a, Term b, LabelSet keep) {
    a = reduce(a, keep | b.set());
    b = reduce(b, keep | a.set());
    // The side whose own labels come first in the output goes left, so that
    // a last product often is the output's order already.
    if (output_rank(b, a.set()) < output_rank(a, b.set())) std::swap(a, b);
    const LabelSet la = a.set(), lb = b.set();
    std::vector<int> batch, contracted, m, n;
    for (int l : a.labels) (lb.has(l) ? (keep.has(l) ? batch : contracted) : m).push_back(l);
    for (int l : b.labels)
      if (!la.has(l)) n.push_back(l);
    int64_t M = 1, N = 1;
    for (int l : m) M *= a.size_of(l);
    for (int l : n) N *= b.size_of(l);
    std::vector<int> labels = batch;
    labels.insert(labels.end(), m.begin(), m.end());
    labels.insert(labels.end(), n.begin(), n.end());
    if (contracted.empty() || (M == 1 && N == 1)) {
      note(contracted.empty() ? "elementwise product (loops)" : "batched dot products (loops)");
      return loops({&a, &b}, labels, contracted);
    }
    // A batched matmul. The contracted labels take the order that needs
    // the fewest copied elements (a's falling strides, or b's).
    m = by_stride(a, m);
    n = by_stride(b, n);
    const std::vector<int> k_a = by_stride(a, contracted), k_b = by_stride(b, contracted);
    auto copied = [&](const std::vector<int>& k) {
      return (mergeable(a, m) && mergeable(a, k) ? 0 : a.t.numel()) + (mergeable(b, k) && mergeable(b, n) ? 0 : b.t.numel());
    };
    const std::vector<int>& k = copied(k_a) <= copied(k_b) ? k_a : k_b;
    bool copy_a = false, copy_b = false;
    const Tensor av = operand(a, batch, m, k, copy_a);
    const Tensor bv = operand(b, batch, k, n, copy_b);
    int64_t K = 1;
    for (int l : k) K *= a.size_of(l);
    Shape shape;
    for (int l : batch) shape.push_back(a.size_of(l));
    for (int l : m) shape.push_back(a.size_of(l));
    for (int l : n) shape.push_back(b.size_of(l));
    labels = batch;
    labels.insert(labels.end(), m.begin(), m.end());
    labels.insert(labels.end(), n.begin(), n.end());
    if (describe_) {
      int64_t B = 1;
      for (int l : batch) B *= a.size_of(l);
      const dispatch::Decision d = bp::explain_matmul(av, bv);
      std::string copies = copy_a && copy_b ? ", both sides copied" : copy_a ? ", left side copied"
                                                           : copy_b ? ", right side copied" : "";
      note("matmul batch=" + std::to_string(B) + " m=" + std::to_string(M) + " n=" + std::to_string(N) +
           " k=" + std::to_string(K) + copies + " -> " + (d.chosen ? d.chosen->name() + " (" + d.how + ")" : "none"));
      return {make(shape), labels, true};
    }
    const Tensor c = bp::matmul(av, bv);  // through the matmul op: its knobs apply
    return {c.reshape(shape), labels, true};
  }

  // a as [batch..., rows, cols], the labels of each group merged: a view
  // when they merge in this order, else a copy in that order.
  Tensor operand(const Term& a, const std::vector<int>& batch, const std::vector<int>& rows,
                 const std::vector<int>& cols, bool& copied) {
    Term src = a;
    copied = !(mergeable(a, rows) && mergeable(a, cols));
    if (copied) {
      std::vector<int> order = batch;
      order.insert(order.end(), rows.begin(), rows.end());
      order.insert(order.end(), cols.begin(), cols.end());
      Shape shape, strides;
      for (int l : order) shape.push_back(a.size_of(l)), strides.push_back(a.stride_of(l));
      const Tensor view = Tensor::from_storage(a.t.storage(), shape, strides, a.t.storage_offset(), a.t.dtype());
      src = {describe_ ? make(shape) : view.contiguous(), order, true};
    }
    Shape shape, strides;
    for (int l : batch) shape.push_back(src.size_of(l)), strides.push_back(src.stride_of(l));
    for (const std::vector<int>* group : {&rows, &cols}) {
      int64_t size = 1;
      for (int l : *group) size *= src.size_of(l);
      shape.push_back(size);
      strides.push_back(group->empty() ? 1 : src.stride_of(group->back()));
    }
    return Tensor::from_storage(src.t.storage(), shape, strides, src.t.storage_offset(), src.t.dtype());
  }

  // The last intermediate in the output's order; a copy when it would alias an operand.
  Tensor output(const Term& last) {
    Shape shape, strides;
    for (int l : p_.eq.output) {
      shape.push_back(p_.eq.sizes[l]);
      strides.push_back(last.set().has(l) ? last.stride_of(l) : 0);  // absent: a size-1 label
    }
    Tensor out = Tensor::from_storage(last.t.storage(), shape, strides, last.t.storage_offset(), last.t.dtype());
    if (describe_) return out;
    return last.fresh ? out : out.clone();
  }

  const Params& p_;
  bool describe_;
  std::string step_text_;
  std::vector<std::string> lines_;
};

}  // namespace

Tensor execute_path(const Params& p, const Path& path) { return Runner(p, false).run(path); }

std::vector<std::string> describe_path(const Params& p, const Path& path) {
  Runner r(p, true);
  r.run(path);
  return r.lines();
}

}  // namespace bp::ops::einsum
