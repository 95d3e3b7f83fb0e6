// The einsum front end: validates a call (errors name the op, the value
// and what is allowed), parses the equation against the shapes and
// reduces it to Params and a problem for dispatch; op.cpp declares the op.

#include "backplane/ops/einsum.h"

#include <functional>
#include <limits>

#include "core/tensor_internal.h"
#include "ops/einsum/params.h"

namespace bp {
namespace ops::einsum {

dispatch::Op& einsum_op() {
  static dispatch::Op& op = dispatch_op("einsum");
  return op;
}

namespace {

void check_operands(const std::vector<Tensor>& operands) {
  if (operands.empty()) throw_bad_value("einsum", "no operands", "at least one operand");
  for (std::size_t k = 0; k < operands.size(); ++k) {
    const Tensor& t = operands[k];
    const std::string name = "operand " + std::to_string(k);
    if (!t.defined()) throw_bad_value("einsum", name + " undefined", "defined tensors");
    if (!is_floating(t.dtype()))
      throw_bad_value("einsum", name + " of dtype " + dtype_name(t.dtype()),
                      std::string("float16, bfloat16, float32 or float64 tensors") +
                          (is_complex(t.dtype()) ? " (complex einsum is not supported yet)" : ""));
    if (t.dtype() != operands[0].dtype())
      throw_bad_value("einsum", name + " of dtype " + dtype_name(t.dtype()) + " and operand 0 of " +
                                    dtype_name(operands[0].dtype()),
                      "operands of one dtype (convert with .to(dtype))");
    if (t.device() != operands[0].device())
      throw_bad_value("einsum", name + " on " + t.device().str() + " and operand 0 on " + operands[0].device().str(),
                      "operands on one device");
  }
}

// The problem's key dimension: a hash of the network, so that autotuning
// tells equations apart (Note [Autotune key]).
int64_t product_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

int64_t network_key(const Network& net) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (LabelSet s : net.inputs) mix(s.w[0]), mix(s.w[1]);
  mix(net.output.w[0]), mix(net.output.w[1]);
  for (double size : net.sizes) mix(static_cast<uint64_t>(size));
  return static_cast<int64_t>(h >> 2);
}

}  // namespace

Call prepare_einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  check_operands(operands);
  std::vector<Shape> shapes;
  for (const Tensor& t : operands) shapes.push_back(t.shape());
  auto p = std::make_shared<Params>();
  p->eq = parse_equation(equation, shapes);
  p->network = p->eq.network();
  p->operands = operands;
  p->dtype = operands[0].dtype();
  p->device = operands[0].device();
  bool empty = false, strided = false;
  for (int64_t s : p->eq.sizes) empty = empty || s == 0;
  for (const Tensor& t : operands) strided = strided || !t.is_contiguous();
  // The work: the cost of the auto path (opt_einsum's model; no flag is read here).
  const Costs costs = evaluate(p->network, cached_path(p->network, Strategy::automatic)->path);
  const double flops = std::min(costs.opt_cost, 9e18);
  Call c;
  c.op = &einsum_op();
  c.problem = einsum_op().problem(p->device, p->dtype, strided ? kStrided : 0u,
                                  {static_cast<int64_t>(operands.size()), product_of(p->eq.output_shape()),
                                   static_cast<int64_t>(flops), network_key(p->network)});
  c.params = p;
  c.compute = !empty;
  c.result = [p, empty]() -> ArgValue {
    if (empty) return Tensor::zeros(p->eq.output_shape(), p->dtype, p->device);
    return *p->result;
  };
  return c;
}

Call prepare_entry(const Args& args) {
  const ArgValue& first = args["equation"];
  const std::vector<ArgValue>& rest = args.sequence("operands");
  if (const std::string* eq = std::get_if<std::string>(&first)) {
    std::vector<Tensor> operands;
    for (std::size_t k = 0; k < rest.size(); ++k) {
      if (const Tensor* t = std::get_if<Tensor>(&rest[k])) {
        operands.push_back(*t);
        continue;
      }
      throw_bad_value("einsum", "a tuple of ints as operand " + std::to_string(k),
                      "tensors after an equation string (lists of ints are sublists of the sublist form, "
                      "einsum(op0, [0, 1], op1, [1, 2], [0, 2]))");
    }
    return prepare_einsum(*eq, operands);
  }
  // The sublist form: op0, sublist0, op1, sublist1, ..., [sublist_out].
  std::vector<Tensor> operands = {std::get<Tensor>(first)};
  std::vector<std::vector<int64_t>> sublists;
  std::optional<std::vector<int64_t>> output;
  std::size_t i = 0;
  auto sublist_after = [&](std::size_t k) {
    if (i >= rest.size() || !std::holds_alternative<std::vector<int64_t>>(rest[i]))
      throw_bad_value("einsum", i >= rest.size() ? "nothing after operand " + std::to_string(k)
                                                 : "a Tensor after operand " + std::to_string(k),
                      "a sublist (a list of ints in [0, 52) or ...) after each operand of the sublist form");
    sublists.push_back(std::get<std::vector<int64_t>>(rest[i++]));
  };
  sublist_after(0);
  while (i < rest.size()) {
    if (const Tensor* t = std::get_if<Tensor>(&rest[i])) {
      operands.push_back(*t);
      ++i;
      sublist_after(operands.size() - 1);
    } else if (i + 1 == rest.size()) {
      output = std::get<std::vector<int64_t>>(rest[i++]);
    } else {
      throw_bad_value("einsum", "two sublists in a row after operand " + std::to_string(operands.size() - 1),
                      "operands and sublists in turn, then at most one output sublist");
    }
  }
  return prepare_einsum(sublist_equation(sublists, output), operands);
}

}  // namespace ops::einsum

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  return std::get<Tensor>(ops::run(ops::einsum::prepare_einsum(equation, operands)));
}

dispatch::Decision explain_einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  return ops::explain(ops::einsum::prepare_einsum(equation, operands));
}

}  // namespace bp
