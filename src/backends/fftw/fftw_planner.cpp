// The planner lock and FFTW's thread initialisation (fftw_planner.h).

#include "backends/fftw/fftw_planner.h"

#include <fftw3.h>

namespace bp::backends::fftw {
namespace {

// Per precision (0 double, 1 single): 0 not tried, 1 ready, -1 failed.
// Read and written with planner_mutex() held.
int g_state[2] = {0, 0};

}  // namespace

std::mutex& planner_mutex() {
  static auto* m = new std::mutex;  // leaked: plans may be destroyed during static destruction
  return *m;
}

bool threads_ready(bool single) {
  if constexpr (!threads_linked()) {
    return false;
  } else {
    int& state = g_state[single ? 1 : 0];
#if BP_FFTW_OMP
    if (state == 0) state = (single ? fftwf_init_threads() : fftw_init_threads()) != 0 ? 1 : -1;
#endif
    return state == 1;
  }
}

void threads_ready_for_wisdom() {
  (void)threads_ready(true);
  (void)threads_ready(false);
}

}  // namespace bp::backends::fftw
