// The ordered list of sdpa implementations: PyTorch's CPU order (spec
// §4.10.8, select_sdp_backend_cpp), flash first, math last, with
// Backplane's efficient:cpu between them (governed by
// cuda.mem_efficient_sdp_enabled, which PyTorch's CPU chooser ignores): it
// takes what flash refuses for shape reasons (any broadcast mask, Ev != E)
// without the math path's L x S scores. The CPU ignores
// cuda.sdp_priority_order and the cuDNN flag, as PyTorch's CPU chooser does.
// math:any is the reference: it accepts every valid problem, so it stays
// last. backplane_cuda adds cudnn:sdpa and math:cuda when it loads; CUDA
// problems take the list in cuda.sdp_priority_order (priority.h).

#include "ops/sdpa/impl_list.h"

#include "ops/sdpa/priority.h"

namespace bp::ops::sdpa {
namespace {

std::vector<std::string> explain_notes(const dispatch::Problem& p) {
  if (p.device.is_cuda())
    return {"CUDA order follows cuda.sdp_priority_order: " + priority_text() +
            " (cuDNN moves first on the first CUDA call where PyTorch prefers it, unless the order was set)"};
  return {"CPU order is fixed (flash:cpu, efficient:cpu, math:any): cuda.sdp_priority_order and the cuDNN flag "
          "do not apply to CPU tensors; cuda.mem_efficient_sdp_enabled governs efficient:cpu (a Backplane addition)"};
}

dispatch::Op& build() {
  dispatch::OpConfig config;
  config.name = "sdpa";
  config.notes = explain_notes;
  // backends.cpu.benchmark times flash:cpu against efficient:cpu (math:any,
  // the reference, only runs when nothing else is acceptable). CUDA keeps
  // the priority order: PyTorch does not autotune attention.
  config.autotune[static_cast<int>(DeviceType::cpu)] =
      dispatch::AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  config.rank = priority_rank;
  config.rank_reads = {flags::Id::cuda_sdp_priority_order};
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
