// path:matmul: the path of backends.opt_einsum's strategy (left to right
// when opt_einsum.enabled is False, as PyTorch), from the path cache, each
// pairwise step a batched matmul through the matmul op (Note [Einsum
// execution] in contract.h), so the BLAS knobs and precision permissions
// of matmul apply to it.

#include "backplane/dispatch_checks.h"
#include "ops/einsum/contract.h"
#include "ops/einsum/params.h"

namespace bp::ops::einsum {
namespace {

void run(const Params& p) { *p.result = execute_path(p, chosen_path(p).found->path); }

}  // namespace

std::unique_ptr<dispatch::Implementation> make_path_matmul() {
  dispatch::Properties props;
  props.reduced = dispatch::kBf16;  // matmul's, where the fp32 precision permits it
  props.workspace = "the path's intermediates, and copies of operands whose labels do not merge into a matrix view";
  props.calls = {"matmul"};
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  return std::make_unique<dispatch::Impl<Params>>(
      "path:matmul", "cpu", props, std::move(checks), run,
      std::vector<flags::Id>{flags::Id::opt_einsum_enabled, flags::Id::opt_einsum_strategy});
}

}  // namespace bp::ops::einsum
