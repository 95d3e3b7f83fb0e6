#pragma once
// The device pass of cufft:dft (fft_cuda.cpp): the norm's scale and the
// conjugation of hfft's input / ihfft's output, in place on contiguous
// data. Behind a plain interface so the .cu file needs no C++20 header.

#include <cstdint>

namespace bp::cuda_impl {

// values: `count` reals (complex = false) or complex numbers, float or
// double; each times `scale`, complex ones conjugated when `conjugate`.
// Returns the launch's cudaError_t (0: success).
int fft_scale_conj(int device, void* values, int64_t count, bool complex, bool dbl, double scale, bool conjugate);

}  // namespace bp::cuda_impl
