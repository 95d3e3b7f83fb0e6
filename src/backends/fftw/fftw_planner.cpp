// The planner lock and FFTW's thread initialisation (fftw_planner.h).

#include "backends/fftw/fftw_planner.h"

#include <fftw3.h>

namespace bp::backends::fftw {
namespace {

// fftw_init_threads enters the planner too, so it runs inside the lock's
// one-time construction: no thread can hold the lock (and plan) before it
// has finished, wherever threads_ready() is first asked.
bool g_threads_ready = false;

}  // namespace

std::mutex& planner_mutex() {
  static auto* m = [] {  // leaked: plans may be destroyed during static destruction
#if BP_FFTW_OMP
    g_threads_ready = fftw_init_threads() != 0 && fftwf_init_threads() != 0;
#endif
    return new std::mutex;
  }();
  return *m;
}

bool threads_ready() {
  (void)planner_mutex();
  return g_threads_ready;
}

}  // namespace bp::backends::fftw
