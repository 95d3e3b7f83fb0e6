#include "backplane/backends/cufft_plan_cache.h"

#include <mutex>
#include <vector>

#include "backends/cuda/cuda_loader.h"

namespace bp::backends::cuda {
namespace {

int visible_devices() {
  const BpCudaApi* api = bp::cuda::api();
  if (api == nullptr) return 0;
  char err[256] = {0};
  int n = api->device_count(err, sizeof err);
  return n < 0 ? 0 : n;
}

}  // namespace

CufftPlanCache& cufft_plan_cache(int index) {
  // Created lazily, once, for every visible device (spec 4.4).
  static std::once_flag once;
  static std::vector<std::unique_ptr<CufftPlanCache>> caches;
  std::call_once(once, [] {
    for (int i = 0, n = visible_devices(); i < n; ++i)
      caches.push_back(std::make_unique<CufftPlanCache>("cuFFT plan cache", kCufftPlanCacheDefaultMaxSize, Device::cuda(i)));
  });
  const int count = static_cast<int>(caches.size());
  if (index < 0 || index >= count) {
    throw Error(ErrorKind::Runtime,
                "cufft_plan_cache: expected 0 <= device index < " + std::to_string(count) +
                    ", but got device with index " + std::to_string(index) +
                    (count == 0 ? " (no CUDA device is available)" : ""),
                "cufft_plan_cache", std::to_string(index), "0 <= index < " + std::to_string(count));
  }
  return *caches[index];
}

}  // namespace bp::backends::cuda
