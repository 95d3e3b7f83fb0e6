// Why a CUDA slot is still empty, and the device facts CUDA rows check (cuda_slot.h).

#include "ops/common/cuda_slot.h"

#include <array>
#include <mutex>

#include "backends/cuda/cuda_loader.h"

namespace bp::ops {

std::optional<dispatch::Availability> unfilled_cuda_slot(const std::string& backend) {
  if (!cuda::is_built()) return dispatch::Availability{false, false, "not built: this build of Backplane has no CUDA support"};
  if (cuda::api() == nullptr) return dispatch::Availability{true, false, "not available: " + cuda::load_error()};
  return dispatch::Availability{false, false, "not built: backplane_cuda was built without " + backend};
}

CudaDeviceEnv cuda_device_env(Device device) {
  constexpr int kMaxDevices = 64;
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<CudaDeviceEnv, kMaxDevices> envs;
  const int index = device.index;
  if (!device.is_cuda() || index < 0 || index >= kMaxDevices) return {};
  std::call_once(once[static_cast<std::size_t>(index)], [&] {
    const BpCudaApi* api = cuda::api();
    if (!api) return;
    CudaDeviceEnv& env = envs[static_cast<std::size_t>(index)];
    char err[256];
    if (api->device_count(err, sizeof err) <= index) return;
    int major = 0, minor = 0;
    if (api->device_capability(index, &major, &minor) == 0) env.sm_major = major, env.sm_minor = minor;
    const long v = api->library_version("cudnn");
    env.cudnn_version = v > 0 ? v : 0;
  });
  return envs[static_cast<std::size_t>(index)];
}

}  // namespace bp::ops
