#pragma once
// A CUDA row of an op's list: declared in the op's folder with its checks
// and the flags its run reads, filled by backplane_cuda when that library
// loads (Note [Slots] in backplane/dispatch.h).

#include <memory>
#include <string>
#include <vector>

#include "backplane/dispatch.h"

namespace bp::ops {

// What a CUDA row's checks need to know of a device, read once per device
// from the loaded backplane_cuda (capabilities and the library do not change
// in a process); zeros when CUDA or the device is not available.
struct CudaDeviceEnv {
  int sm_major = 0, sm_minor = 0;  // compute capability; 0 when unknown
  long cudnn_version = 0;          // run-time cuDNN, major*10000 + minor*100 + patch (9.19.0 = 91900); 0 when none
};
CudaDeviceEnv cuda_device_env(Device device);

// Why a CUDA slot has no run function: this build has no CUDA, the library
// did not load (the loader's reason), or it loaded without `backend`.
std::optional<dispatch::Availability> unfilled_cuda_slot(const std::string& backend);

template <class P>
std::unique_ptr<dispatch::Implementation> cuda_slot(std::string name, std::string backend, dispatch::Properties props,
                                                    std::vector<dispatch::Check<P>> checks,
                                                    std::vector<flags::Id> run_reads = {}) {
  props.device = DeviceType::cuda;
  std::string b = backend;
  return std::make_unique<dispatch::Impl<P>>(std::move(name), std::move(backend), std::move(props), std::move(checks),
                                             nullptr, std::move(run_reads), [b] { return unfilled_cuda_slot(b); });
}

}  // namespace bp::ops
