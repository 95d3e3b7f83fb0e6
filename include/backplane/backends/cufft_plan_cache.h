#pragma once
// torch.backends.cuda.cufft_plan_cache: one plan cache per CUDA device.
// Plans are opaque to the core (made and freed inside backplane_cuda).

#include <memory>
#include <string>

#include "backplane/plan_cache.h"

namespace bp::backends::cuda {

using CufftPlanCache = PlanCache<std::string, void>;

// Default capacity, as PyTorch's for CUDA >= 10.
inline constexpr int64_t kCufftPlanCacheDefaultMaxSize = 4096;

// The cache of device `index`; IndexError unless 0 <= index < device_count().
CufftPlanCache& cufft_plan_cache(int index);

}  // namespace bp::backends::cuda
