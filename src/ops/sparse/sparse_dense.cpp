// dense:matmul: the fallback that accepts every valid problem of a device
// the matmul op serves: decompress the weight (layout.h), then
// linear(input, dense, bias) through the matmul dispatcher, whose own choice (and
// knobs) decide the GEMM. Also the dense baseline of `backplane bench sparse`.

#include <algorithm>

#include "backplane/ops/matmul.h"
#include "ops/sparse/impls.h"
#include "ops/sparse/layout.h"
#include "ops/sparse/params.h"

namespace bp::ops::sparse {
namespace {

// The dense weight lands in a buffer kept per thread and grown to the
// largest size asked (Note [Kernel scratch]): a fresh 64 MiB tensor per call
// was faulted in page by page, which cost more than the decompression.
void run(const Params& p) {
  thread_local StoragePtr buffer;
  const std::size_t bytes = static_cast<std::size_t>(p.n * p.k) * dtype_itemsize(p.dtype);
  if (!buffer || buffer->nbytes() < bytes) buffer = allocate_storage(Device::cpu(), std::max<std::size_t>(bytes, 1));
  decompress_into(p.values, p.meta, p.k, "dense:matmul", buffer->data());
  const Tensor dense = Tensor::from_storage(buffer, {p.n, p.k}, {p.k, 1}, 0, p.dtype);
  const Tensor product = bp::linear(p.x, dense, p.bias);  // [m, n] of p.dtype, the bias added before rounding
  Tensor view = Tensor::from_storage(p.out.storage(), {p.m, p.n}, {p.out_rs, p.out_cs}, p.out.storage_offset(), p.dtype);
  view.copy_from(product);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_dense() {
  dispatch::Properties props;
  props.workspace = "the dense weight (decompressed on every call into a buffer kept per thread)";
  props.calls = {"matmul"};
  return std::make_unique<dispatch::Impl<Params>>("dense:matmul", "cpu", props,
                                                  std::vector<dispatch::Check<Params>>{}, run);
}

}  // namespace bp::ops::sparse
