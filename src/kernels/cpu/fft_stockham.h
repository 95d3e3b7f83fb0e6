#pragma once
// The FFT kernel of native:stockham (src/ops/fft/fft_native.cpp), written
// apart from FFTW and from the reference (ops/fft/ref_dft.h).
//
// Note [Stockham FFT]
// A length n = r1 r2 ... rk with every ri in {4, 2, 3, 5, 7, 11, 13} is
// transformed by k self-sorting (Stockham, decimation in frequency) passes
// between the data and a scratch array of the same size: pass i, with L the
// length still to transform, m = L / r and S the distance between the
// current sub-sequences' elements, reads x[(p + j m) S + u] for j < r and
// writes y[(r p + k) S + u] = (sum_j x[(p + j m) S + u] w_r^{jk}) w_L^{pk};
// the output is in natural order after the last pass, with no bit reversal.
// Every element of the line is V columns wide (u runs over S = s V
// contiguous elements), so the columns of a dense [n, V] block are
// transformed together with unit-stride inner loops: that is how a dim that
// is not the last one is transformed (blocks of columns gathered from the
// array), and why one plan serves a 1-D line (V = 1) and a block alike.
// A length with a prime factor above 13 is done by Bluestein's algorithm:
// jk = (j^2 + k^2 - (k - j)^2) / 2 turns the transform into a cyclic
// convolution with the chirp exp(sign pi i k^2 / n), of a power-of-two
// length m >= 2n - 1, done by the passes above.
// Plans (factors, the twiddles w_L^{pk} of every pass, Bluestein's chirp and
// the transformed convolution kernel) are computed in double precision,
// rounded to the element type, and kept in a small cache per (n, sign, type)
// (64 plans or 64 MiB of tables per type; emptied when a new one would not fit).

#include <complex>
#include <cstdint>
#include <string>

namespace bp::kernels::fft {

// Transforms along the middle dim of the dense array data viewed as
// [outer, n, inner]: x[k] <- sum_j x[j] exp(sign 2 pi i j k / n), unscaled,
// in place, sign -1 or +1, on up to `threads` threads.
template <class T>
void dft_lines(std::complex<T>* data, int64_t outer, int64_t n, int64_t inner, int sign, int threads);

// How an n-point transform is done, for explain: "4096 points in passes of
// radix 4x4x4x4x4x4", "4099 points by Bluestein (...): a convolution of 16384 points".
std::string describe(int64_t n);

// Plans held in the per-size cache (both element types).
int64_t cached_plans();

}  // namespace bp::kernels::fft
