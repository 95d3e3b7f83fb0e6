#pragma once
// The reference DFT of ref:any, written apart from every library: an
// iterative radix-2 transform for powers of two and Bluestein's chirp-z
// algorithm (through a radix-2 transform of a power-of-two size >= 2n - 1)
// for every other length, in double precision.

#include <complex>
#include <cstdint>
#include <vector>

namespace bp::ops::fft::ref {

using cd = std::complex<double>;

// x[k] <- sum_j x[j] exp(sign * 2 pi i j k / n), in place; sign is -1 or +1. Unscaled.
void dft(std::vector<cd>& x, int sign);

// Applies dft along dim d of a dense row-major array of `shape`.
void dft_along(cd* data, const std::vector<int64_t>& shape, int64_t d, int sign);

}  // namespace bp::ops::fft::ref
