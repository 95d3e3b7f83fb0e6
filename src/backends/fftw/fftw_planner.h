#pragma once
// FFTW's planner is not thread-safe: making or destroying a plan, and
// importing or exporting wisdom, must be serialised across the whole
// process (FFTW manual, "Thread safety"); executing a plan is thread-safe
// (the new-array execute functions, on distinct arrays). Everything that
// enters the planner takes planner_mutex().

#include <mutex>

namespace bp::backends::fftw {

std::mutex& planner_mutex();

// Whether FFTW's OpenMP variant is linked and initialised (plans may then
// use threads). Its one-time initialisation runs with planner_mutex()'s
// construction, so this may be asked with or without the lock held.
bool threads_ready();

}  // namespace bp::backends::fftw
