#pragma once
// FFTW's planner is not thread-safe: making or destroying a plan, and
// importing or exporting wisdom, must be serialised across the whole
// process (FFTW manual, "Thread safety"); executing a plan is thread-safe
// (the new-array execute functions, on distinct arrays). Everything that
// enters the planner takes planner_mutex().
//
// FFTW's threads are initialised per precision (fftwf_init_threads,
// fftw_init_threads), each before that precision's first plan or wisdom
// import or export: initialising one creates its planner, about half a
// millisecond, which a process using only complex64 never pays for double.
// Wisdom is only ever imported and exported with both initialised, so
// every file carries the planner hashes of the threaded planners (FFTW
// refuses wisdom whose hash differs from its planner's).

#include <mutex>

namespace bp::backends::fftw {

std::mutex& planner_mutex();

// Whether FFTW's OpenMP variant is linked (plans may then use threads).
constexpr bool threads_linked() {
#if BP_FFTW_OMP
  return true;
#else
  return false;
#endif
}

// Initialises FFTW's threads for one precision (fftwf when `single`) on
// the first call; whether its plans may use threads. planner_mutex() held.
bool threads_ready(bool single);

// Both precisions, before wisdom is imported or exported. planner_mutex() held.
void threads_ready_for_wisdom();

}  // namespace bp::backends::fftw
