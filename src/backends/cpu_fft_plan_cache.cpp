// backplane.backends.cpu.fft_plan_cache (backplane/backends/fft_plan_cache.h);
// the wisdom functions live with FFTW (src/backends/fftw/fftw_wisdom.cpp),
// and are stubs here when this build has no FFTW.

#include "backplane/backends/fft_plan_cache.h"

#include "backplane_build_config.h"

namespace bp::backends::cpu {

FftPlanCache& fft_plan_cache() {
  // Leaked: plans may be released by threads that outlive static destruction.
  static auto* cache = new FftPlanCache("CPU FFT plan cache", kFftPlanCacheDefaultMaxSize, Device::cpu());
  return *cache;
}

#if !BP_HAVE_FFTW
void save_fft_wisdom(const std::string&) {
  throw_not_implemented("fft_plan_cache.save", "fft_plan_cache.save: this build of Backplane has no FFTW");
}
bool load_fft_wisdom(const std::string&) {
  throw_not_implemented("fft_plan_cache.load", "fft_plan_cache.load: this build of Backplane has no FFTW");
}
#endif

}  // namespace bp::backends::cpu
