#pragma once
// Internal: the CUDA side of the allocator, shared with the tensor copies.

#include <string>

#include "backplane/device.h"
#include "core/cuda_api.h"

namespace bp::alloc {

// The CUDA table when `device` (a cuda device) exists; otherwise a
// RuntimeError naming `op`, the device and the reason (CUDA not built, the
// library not loadable, no such device).
const BpCudaApi& require_cuda(Device device, const char* op);

}  // namespace bp::alloc
