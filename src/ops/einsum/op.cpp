// The op "einsum", declared once (backplane/op_spec.h): its ordered list,
// its entry (the equation form and torch.einsum's sublist form), its shape
// form and its benchmark. docs/adding_an_op.md is the recipe this follows.
//
// The list: path:matmul (the path of backends.opt_einsum, pairwise steps
// through the matmul op), then the reference, ref:any, which accepts every
// valid problem.

#include "ops/einsum/params.h"

namespace bp::ops::einsum {
namespace {

dispatch::OpConfig config() {
  dispatch::OpConfig c;
  c.name = "einsum";
  // operands, output elements, the auto path's FLOPs (opt_einsum's cost
  // model) and a hash of the equation and shapes, so that the autotune
  // cache tells problems apart.
  c.signature = {"operands", "out", "flops", "key"};
  c.flops = [](const int64_t* d) { return static_cast<double>(d[2]); };
  c.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  c.call_notes = [](const dispatch::Problem&, const void* params) {
    return path_notes(*static_cast<const Params*>(params));
  };
  return c;
}

EntrySpec entry() {
  EntrySpec e;
  e.name = "einsum";
  e.python = "backplane.einsum";
  e.doc =
      "Einstein summation, as torch.einsum: einsum('bij,bjk->bik', a, b), or the sublist form\n"
      "einsum(a, [0, 1], b, [1, 2], [0, 2]). Implicit and explicit output, '...' broadcasting, repeated\n"
      "subscripts (diagonals, traces), size-1 broadcasting; operands of one float dtype. Three or more\n"
      "operands are contracted along the path of backends.opt_einsum.strategy (left to right when\n"
      "backends.opt_einsum.enabled is False); backends.explain('einsum', ...) shows the path and its costs.";
  ArgSpec equation = arg::tensor("equation", "the equation ('ij,jk->ik'), or the first operand of the sublist form");
  equation.accepts |= bit(ArgKind::string);
  e.args = {equation, arg::tensors_or_ints("operands", "the operands (and, in the sublist form, their sublists)")};
  e.prepare = prepare_entry;
  return e;
}

// A chain of matrices, "ab,bc,cd->ad", of sizes alternating n and k, with a
// batch label on every operand when batch > 1 ("Zab,Zbc->Zac").
Form form() {
  Form f;
  f.entry = "einsum";
  f.dims = {{"operands", 3, "matrices in the chain (1 to 25)"},
            {"n", 64, "size of the chain's odd labels (the outer ones)"},
            {"k", 64, "size of the chain's even labels"},
            {"batch", 1, "batch size (1: no batch label)"}};
  f.line_dims = 4;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    const int64_t count = d[0];
    if (count < 1 || count > 25) throw_bad_value("einsum form operands", std::to_string(count), "1 to 25");
    const std::string batch = d[3] > 1 ? "Z" : "";
    std::string eq;
    std::vector<Tensor> operands;
    for (int64_t i = 0; i < count; ++i) {
      eq += (i ? "," : "") + batch + static_cast<char>('a' + i) + static_cast<char>('a' + i + 1);
      Shape shape;
      if (d[3] > 1) shape.push_back(d[3]);
      shape.push_back(i % 2 == 0 ? d[1] : d[2]);
      shape.push_back(i % 2 == 0 ? d[2] : d[1]);
      operands.push_back(random ? random_tensor(shape, dtype, static_cast<unsigned>(i + 1), device)
                                : Tensor::zeros(shape, dtype).to(device));
    }
    eq += "->" + batch + "a" + static_cast<char>('a' + count);
    return std::vector<std::pair<std::string, ArgValue>>{{"equation", eq}, {"operands", operands}};
  };
  return f;
}

}  // namespace

OpSpec spec() {
  OpSpec s;
  s.config = config();
  s.implementations.push_back(make_path_matmul());
  s.implementations.push_back(make_ref());  // the reference, last
  s.entries = {entry()};
  s.form = form();
  s.bench.peer_libraries = {"ref"};
  s.bench.peer_text = "the float64 reference, ref:any";
  s.bench.extras_title = "path search (us, uncached) and execution against direct matmul calls";
  s.bench.extras = bench_extras;
  return s;
}

}  // namespace bp::ops::einsum
