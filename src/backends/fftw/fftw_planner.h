#pragma once
// FFTW's planner is not thread-safe: making or destroying a plan, and
// importing or exporting wisdom, must be serialised across the whole
// process (FFTW manual, "Thread safety"); executing a plan is thread-safe
// (the new-array execute functions, on distinct arrays). Everything that
// enters the planner takes planner_mutex().

#include <mutex>

namespace bp::backends::fftw {

std::mutex& planner_mutex();

// Whether FFTW's OpenMP variant is linked (plans may then use threads).
// Its one-time initialisation runs on the first call; call it with
// planner_mutex() held.
bool threads_ready();

}  // namespace bp::backends::fftw
