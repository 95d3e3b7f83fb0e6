// Why a CUDA slot is still empty (cuda_slot.h).

#include "ops/common/cuda_slot.h"

#include "backends/cuda/cuda_loader.h"

namespace bp::ops {

std::optional<dispatch::Availability> unfilled_cuda_slot(const std::string& backend) {
  if (!cuda::is_built()) return dispatch::Availability{false, false, "not built: this build of Backplane has no CUDA support"};
  if (cuda::api() == nullptr) return dispatch::Availability{true, false, "not available: " + cuda::load_error()};
  return dispatch::Availability{false, false, "not built: backplane_cuda was built without " + backend};
}

}  // namespace bp::ops
