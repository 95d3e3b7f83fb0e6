// The ordered list of sdpa implementations: PyTorch's CPU order (spec
// §4.10.8, select_sdp_backend_cpp), flash first, then math. The CPU ignores
// cuda.sdp_priority_order and the cuDNN / memory-efficient flags, as
// PyTorch's CPU chooser does.
//
// efficient:cpu (the memory-efficient kernel, governed by
// cuda.mem_efficient_sdp_enabled) is not written yet; it will go between
// flash:cpu and math:any. math:any is the reference: it accepts every valid
// problem, so it stays last.

#include "ops/sdpa/impl_list.h"

namespace bp::ops::sdpa {
namespace {

std::vector<std::string> explain_notes(const dispatch::Problem&) {
  return {"CPU order is fixed (flash:cpu, math:any), as in PyTorch: cuda.sdp_priority_order and the cuDNN / "
          "memory-efficient flags do not apply to CPU tensors"};
}

dispatch::Op& build() {
  dispatch::OpConfig config;
  config.name = "sdpa";
  config.notes = explain_notes;
  dispatch::Op& op = dispatch::define_op(config);
  op.add(make_flash_cpu());
  // efficient:cpu goes here once written (see the top of this file).
  op.add(make_math());
  return op;
}

[[maybe_unused]] const bool defined_at_load = (sdpa_op(), true);

}  // namespace

dispatch::Op& sdpa_op() {
  static dispatch::Op& op = build();
  return op;
}

}  // namespace bp::ops::sdpa
