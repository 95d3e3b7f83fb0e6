// The op "axpy", declared once: dispatch configuration, the ordered list,
// the entry point and the shape form (backplane/op_spec.h). This is the
// template of docs/adding_an_op.md: copy the folder, rename, register.

#include "params.h"

namespace bp::ops::axpy {

OpSpec spec() {
  OpSpec s;
  s.config.name = "axpy";
  s.config.signature = {"n"};
  s.config.flops = [](const int64_t* d) { return 2.0 * double(d[0]); };
  s.config.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};

  s.implementations.push_back(make_loop());
  s.implementations.push_back(make_ref());  // the reference, last

  EntrySpec e;
  e.name = "axpy";
  e.python = "backplane.axpy";
  e.doc = "alpha * x + y, for x and y of one shape and float dtype.";
  e.args = {arg::tensor("x"), arg::tensor("y"), arg::keyword_only(arg::real("alpha", 1.0, "the scale of x"))};
  e.prepare = [](const Args& a) { return prepare_axpy(a.tensor("x"), a.tensor("y"), a.real("alpha")); };
  s.entries.push_back(std::move(e));

  Form f;
  f.entry = "axpy";
  f.dims = {{"n", 1024, "elements"}};
  f.line_dims = 1;
  f.make = [](const std::vector<int64_t>& d, DType dtype, Device device, bool random) {
    auto make = [&](unsigned seed) {
      return random ? random_tensor({d[0]}, dtype, seed, device) : Tensor::zeros({d[0]}, dtype).to(device);
    };
    return std::vector<std::pair<std::string, ArgValue>>{{"x", make(1)}, {"y", make(2)}};
  };
  s.form = std::move(f);
  s.bench.peer_libraries = {"ref"};
  s.bench.peer_text = "the reference";
  return s;
}

}  // namespace bp::ops::axpy
