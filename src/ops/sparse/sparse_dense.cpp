// dense:matmul: the fallback that accepts every valid problem of a device
// the matmul op serves: decompress the weight (layout.h), then
// linear(input, dense, bias) through the matmul dispatcher, whose own choice (and
// knobs) decide the GEMM. Also the dense baseline of `backplane bench sparse`.

#include "backplane/ops/matmul.h"
#include "ops/sparse/impls.h"
#include "ops/sparse/layout.h"
#include "ops/sparse/params.h"

namespace bp::ops::sparse {
namespace {

void run(const Params& p) {
  const Tensor dense = decompress(p.values, p.meta, p.k, "dense:matmul");
  const Tensor product = bp::linear(p.x, dense, p.bias);  // [m, n] of p.dtype, the bias added before rounding
  Tensor view = Tensor::from_storage(p.out.storage(), {p.m, p.n}, {p.out_rs, p.out_cs}, p.out.storage_offset(), p.dtype);
  view.copy_from(product);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_dense() {
  dispatch::Properties props;
  props.workspace = "the dense weight (decompressed on every call)";
  props.calls = {"matmul"};
  return std::make_unique<dispatch::Impl<Params>>("dense:matmul", "cpu", props,
                                                  std::vector<dispatch::Check<Params>>{}, run);
}

}  // namespace bp::ops::sparse
