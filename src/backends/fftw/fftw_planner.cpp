// The planner lock and FFTW's thread initialisation (fftw_planner.h).

#include "backends/fftw/fftw_planner.h"

#include <fftw3.h>

namespace bp::backends::fftw {

std::mutex& planner_mutex() {
  static auto* m = new std::mutex;  // leaked: plans may be destroyed during static destruction
  return *m;
}

bool threads_ready() {
#if BP_FFTW_OMP
  // fftw_init_threads must run once before any threaded plan.
  static const bool ready = fftw_init_threads() != 0 && fftwf_init_threads() != 0;
  return ready;
#else
  return false;
#endif
}

}  // namespace bp::backends::fftw
