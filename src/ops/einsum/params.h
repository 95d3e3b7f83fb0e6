#pragma once
// The op "einsum" (docs/adding_an_op.md): torch.einsum over operands of
// one float dtype. Every implementation receives these parameters; the
// front end (einsum.cpp) has parsed the equation against the operands'
// shapes. Implementations write the result into *result on every run
// (autotuning runs them several times) and never read it.

#include <memory>

#include "backplane/op_spec.h"
#include "ops/einsum/equation.h"
#include "ops/einsum/paths.h"

namespace bp::ops::einsum {

struct Params {
  Equation eq;
  Network network;               // eq.network()
  std::vector<Tensor> operands;  // as given
  std::shared_ptr<Tensor> result = std::make_shared<Tensor>();
  DType dtype = DType::f32;
  Device device = Device::cpu();
};

// Layout bits of the problem (part of the autotune key).
enum LayoutBits : uint32_t { kStrided = 1u << 0 };

// The op's declaration (op.cpp), the op, its front end (einsum.cpp) and its makers.
OpSpec spec();
dispatch::Op& einsum_op();
Call prepare_einsum(const std::string& equation, const std::vector<Tensor>& operands);
Call prepare_entry(const Args& args);  // the equation form and the sublist form
std::unique_ptr<dispatch::Implementation> make_path_matmul();  // einsum_path.cpp
std::unique_ptr<dispatch::Implementation> make_ref();          // einsum_ref.cpp

// The path the path implementation follows under the current flags
// (opt_einsum.enabled, opt_einsum.strategy), from the path cache, with
// what chose it ("opt_einsum.strategy = 'auto': dp").
struct Chosen {
  std::shared_ptr<const Found> found;
  std::string why;
};
Chosen chosen_path(const Params& p);

// The explain notes of a call: the path, its costs and each step's
// decision (op.cpp's call_notes).
std::vector<std::string> path_notes(const Params& p);

// `backplane bench einsum`'s extra measurements (bench_extras.cpp).
std::vector<std::pair<std::string, double>> bench_extras();

}  // namespace bp::ops::einsum
