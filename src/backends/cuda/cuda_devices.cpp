#include "backends/cuda/cuda_devices.h"

#include "backends/cuda/cuda_loader.h"

namespace bp::cuda {
namespace {

Devices census() {
  Devices d;
  if (!is_built()) {
    d.reason = "not built: this build of Backplane has no CUDA support";
    return d;
  }
  const BpCudaApi* a = api();
  if (a == nullptr) {
    d.reason = "not available: " + load_error();
    return d;
  }
  char err[512] = "";
  const int n = a->device_count(err, sizeof err);
  if (n > 0) {
    d.count = n;
    return d;
  }
  const std::string why = err[0] ? err : "no CUDA device";
  // Without libcuda the runtime only says "driver version is insufficient";
  // name the real cause first.
  d.reason = a->driver_version() == 0 ? "not available: no NVIDIA driver found; the CUDA runtime says: " + why
                                      : "not available: " + why;
  return d;
}

}  // namespace

const Devices& devices() {
  static const Devices d = census();
  return d;
}

}  // namespace bp::cuda
