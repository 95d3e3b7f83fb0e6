#pragma once
// The checks of cufft:dft (the fft op's CUDA slot): in libbackplane and
// SDK-free, so they are unit-tested and their flags known without a GPU;
// the run lives in backplane_cuda (src/cuda/fft_cuda.cpp).

#include <vector>

#include "backplane/dispatch.h"
#include "ops/fft/params.h"

namespace bp::ops::fft::cuda_checks {

// cuFFT plans transforms of rank 1 to 3.
inline constexpr std::size_t kMaxRank = 3;

std::vector<dispatch::Check<Params>> cufft_checks();

}  // namespace bp::ops::fft::cuda_checks
