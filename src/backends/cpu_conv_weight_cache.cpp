// backplane.backends.cpu.conv_weight_cache (backplane/backends/conv_weight_cache.h).

#include "backplane/backends/conv_weight_cache.h"

namespace bp::backends::cpu {

ConvWeightCache& conv_weight_cache() {
  // Leaked: entries may be released by threads that outlive static destruction.
  static auto* cache = [] {
    auto* c = new ConvWeightCache("CPU conv weight cache", kConvWeightCacheDefaultMaxSize, Device::cpu());
    c->set_max_bytes(kConvWeightCacheDefaultMaxBytes);
    return c;
  }();
  return *cache;
}

}  // namespace bp::backends::cpu
