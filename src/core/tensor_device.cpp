// Tensor::to(Device): copies between the host and CUDA devices through the
// backplane_cuda table (Note [Loading backplane_cuda] in core/cuda_api.h);
// the core links no CUDA.

#include "backplane/error.h"
#include "backplane/tensor.h"
#include "core/allocator.h"
#include "core/tensor_internal.h"

namespace bp {
namespace {

enum CopyKind { kHostToDevice = 0, kDeviceToHost = 1, kDeviceToDevice = 2 };

void cuda_copy(const BpCudaApi& api, void* dst, const void* src, std::size_t bytes, CopyKind kind,
               const std::string& what) {
  if (bytes == 0) return;
  char err[512] = {};
  if (api.copy(dst, src, bytes, kind, err, sizeof err) != 0) {
    throw_runtime("Tensor.to", "Tensor.to: copying " + what + " failed: " +
                                   (err[0] != '\0' ? std::string(err) : std::string("unknown CUDA error")));
  }
}

}  // namespace

Tensor Tensor::to(Device target) const {
  const char* op = "Tensor.to";
  check_defined(op);
  const Device here = device();
  if (target == here) return *this;
  const std::string what = here.str() + " -> " + target.str();

  if (here.is_cpu()) {
    const BpCudaApi& api = alloc::require_cuda(target, op);
    const Tensor src = contiguous();
    Tensor out = empty(shape_, dtype_, target);
    cuda_copy(api, out.data(), src.data(), nbytes(), kHostToDevice, what);
    return out;
  }

  const BpCudaApi& api = alloc::require_cuda(here, op);
  if (target.is_cuda() && is_contiguous()) {
    alloc::require_cuda(target, op);
    Tensor out = empty(shape_, dtype_, target);
    cuda_copy(api, out.data(), data(), nbytes(), kDeviceToDevice, what);
    return out;
  }
  // Bring the whole stretch of memory the view covers to the host (for a
  // contiguous view that is exactly its elements), rebuild the view there
  // and make it dense. Gathering on the device would need a kernel.
  const detail::Extent e = detail::element_extent(shape_, strides_, op, static_cast<int64_t>(itemsize()));
  Tensor span = empty({e.end - e.lowest}, dtype_);
  const char* first = static_cast<const char*>(data()) + e.lowest * static_cast<int64_t>(itemsize());
  cuda_copy(api, span.data(), first, span.nbytes(), kDeviceToHost, what);
  Tensor host = from_storage(span.storage_, shape_, strides_, -e.lowest, dtype_).contiguous();
  return target.is_cpu() ? host : host.to(target);
}

}  // namespace bp
