#pragma once
// backplane.backends.cpu.fft_plan_cache (a Backplane addition): the CPU
// counterpart of cuda.cufft_plan_cache, holding FFTW plans (the fft op's
// fftw:dft). Same interface and semantics (backplane/plan_cache.h): size,
// max_size (default 4096; 0 disables caching; negative refused), clear(),
// and the byte bound max_bytes. Plans are opaque here (made and destroyed
// by the fftw:dft implementation, under FFTW's planner lock).
//
// FFTW's wisdom (what its planner learnt by measuring) can be saved to a
// file and loaded in a later process, so a plan made with
// cpu.fft_planning_effort = "measure" costs its planning time once per
// machine. The file is user data (Note [User files] in src/core/user_file.h).

#include <cstdint>
#include <string>

#include "backplane/plan_cache.h"

namespace bp::backends::cpu {

using FftPlanCache = PlanCache<std::string, void>;
inline constexpr int64_t kFftPlanCacheDefaultMaxSize = 4096;

FftPlanCache& fft_plan_cache();

// Writes FFTW's wisdom (double and single precision) to `path`, merged with
// the wisdom already there. RuntimeError when it cannot be written or the
// file there is not a wisdom file; NotImplementedError without FFTW.
void save_fft_wisdom(const std::string& path);
// Imports the wisdom of `path`; returns false (with one warning) when the
// file is absent. ValueError naming the file when it is not a wisdom file.
bool load_fft_wisdom(const std::string& path);

}  // namespace bp::backends::cpu
