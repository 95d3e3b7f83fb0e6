// The "cuda" record and the records of the CUDA libraries linked into
// backplane_cuda. Versions come from the libraries at run time
// (BpCudaApi::library_version); the core never links CUDA.

#include "backends/cuda/cuda_devices.h"
#include "backends/cuda/cuda_loader.h"
#include "backends/probes.h"
#include "backplane/backends/cuda.h"
#include "backplane_build_config.h"

namespace bp::backends::detail {
namespace {

// 13000 -> "13.0" (CUDA's major*1000 + minor*10 encoding).
std::string cuda_version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

BackendInfo probe_cuda() {
  BackendInfo b;
  b.name = "cuda";
  b.built = ::bp::cuda::is_built();
  const auto& devices = ::bp::cuda::devices();
  b.available = devices.count > 0;
  b.reason = devices.reason;
  if (!b.built) return b;
  b.details.emplace_back("toolkit at build", BP_CUDA_TOOLKIT_VERSION);
  b.details.emplace_back("library", ::bp::cuda::library_path());
  const BpCudaApi* a = ::bp::cuda::api();
  if (a == nullptr) return b;
  b.version = cuda_version_text(a->runtime_version());
  const int driver = a->driver_version();
  b.details.emplace_back("driver", driver > 0 ? cuda_version_text(driver) : "none");
  for (int i = 0; i < devices.count; ++i) {
    Device d;
    d.index = i;
    d.name = cuda::get_device_name(i);
    auto [major, minor] = cuda::get_device_capability(i);
    d.description = "compute capability " + std::to_string(major) + "." + std::to_string(minor);
    b.devices.push_back(d);
  }
  return b;
}

BackendInfo probe_cuda_library(const std::string& name, bool built) {
  BackendInfo b;
  b.name = name;
  b.built = built;
  if (!built) {
    b.reason = not_built_reason(::bp::cuda::is_built()
                                    ? name + " was not found when Backplane was configured"
                                    : "this build of Backplane has no CUDA support");
    return b;
  }
  const BpCudaApi* a = ::bp::cuda::api();
  if (a == nullptr) {
    b.reason = not_available_reason(::bp::cuda::load_error());
    return b;
  }
  b.version = decode_version(a->library_version(name.c_str()));
  if (b.version.empty()) {
    b.reason = not_available_reason("backplane_cuda does not report a " + name + " version");
    return b;
  }
  // The library loaded, but a CUDA library can only run on a device.
  b.available = ::bp::cuda::devices().count > 0;
  if (!b.available) b.reason = not_available_reason("no usable CUDA device (see the cuda record)");
  return b;
}

}  // namespace bp::backends::detail
