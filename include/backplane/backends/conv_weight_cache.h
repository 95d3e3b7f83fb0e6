#pragma once
// backplane.backends.cpu.conv_weight_cache (a Backplane addition):
// convolution weights as an implementation transformed them, kept across
// calls while the weight's values stay the same (winograd:f4x3's U = G g G^T;
// Note [Winograd weight cache] in src/ops/conv/winograd_weight_cache.h).
// The interface of the plan caches (backplane/plan_cache.h): size, max_size
// (default 256; 0 disables caching), clear(), hits and misses, and a byte
// bound max_bytes (default 256 MiB) on what the entries hold; memory_stats()
// counts those bytes as the CPU's plan_bytes.

#include <cstdint>
#include <string>

#include "backplane/plan_cache.h"

namespace bp::backends::cpu {

using ConvWeightCache = PlanCache<std::string, void>;
inline constexpr int64_t kConvWeightCacheDefaultMaxSize = 256;
inline constexpr int64_t kConvWeightCacheDefaultMaxBytes = int64_t{256} << 20;

ConvWeightCache& conv_weight_cache();

}  // namespace bp::backends::cpu
