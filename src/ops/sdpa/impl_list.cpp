// The ordered list of sdpa implementations: PyTorch's CPU order (spec
// §4.10.8, select_sdp_backend_cpp), flash first, math last, with
// Backplane's efficient:cpu between them (governed by
// cuda.mem_efficient_sdp_enabled, which PyTorch's CPU chooser ignores): it
// takes what flash refuses for shape reasons (any broadcast mask, Ev != E)
// without the math path's L x S scores. The CPU ignores
// cuda.sdp_priority_order and the cuDNN flag, as PyTorch's CPU chooser does.
// math:any is the reference: it accepts every valid problem, so it stays
// last.

#include "ops/sdpa/impl_list.h"

namespace bp::ops::sdpa {
namespace {

std::vector<std::string> explain_notes(const dispatch::Problem&) {
  return {"CPU order is fixed (flash:cpu, efficient:cpu, math:any): cuda.sdp_priority_order and the cuDNN flag "
          "do not apply to CPU tensors; cuda.mem_efficient_sdp_enabled governs efficient:cpu (a Backplane addition)"};
}

dispatch::Op& build() {
  dispatch::OpConfig config;
  config.name = "sdpa";
  config.notes = explain_notes;
  dispatch::Op& op = dispatch::define_op(config);
  op.add(make_flash_cpu());
  op.add(make_efficient_cpu());
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
