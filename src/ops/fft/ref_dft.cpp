// The reference DFT (ref_dft.h).

#include "ops/fft/ref_dft.h"

#include <cmath>
#include <numbers>

namespace bp::ops::fft::ref {
namespace {

bool power_of_two(std::size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// exp(sign * 2 pi i k / n), with k reduced mod n first so the angle stays
// small and exact for large k.
cd unit_root(int64_t k, int64_t n, int sign) {
  k %= n;
  if (k < 0) k += n;
  const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
  return {std::cos(angle), std::sin(angle)};
}

// Iterative Cooley-Tukey: bit-reversal permutation, then log2(n) butterfly passes.
void radix2(std::vector<cd>& x, int sign) {
  const std::size_t n = x.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[i], x[j]);
  }
  for (std::size_t len = 2; len <= n; len <<= 1) {
    const std::size_t half = len / 2;
    std::vector<cd> w(half);
    for (std::size_t k = 0; k < half; ++k) w[k] = unit_root(static_cast<int64_t>(k), static_cast<int64_t>(len), sign);
    for (std::size_t start = 0; start < n; start += len) {
      for (std::size_t k = 0; k < half; ++k) {
        const cd a = x[start + k];
        const cd b = x[start + k + half] * w[k];
        x[start + k] = a + b;
        x[start + k + half] = a - b;
      }
    }
  }
}

// Bluestein: jk = (j^2 + k^2 - (k - j)^2) / 2 turns the DFT into a
// convolution with the chirp exp(sign * pi i m^2 / n), done by radix-2
// transforms of size m >= 2n - 1.
void bluestein(std::vector<cd>& x, int sign) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::size_t m = 1;
  while (m < static_cast<std::size_t>(2 * n - 1)) m <<= 1;
  // chirp[k] = exp(sign * pi i k^2 / n) = unit_root(k^2 mod 2n, 2n).
  std::vector<cd> chirp(static_cast<std::size_t>(n));
  for (int64_t k = 0; k < n; ++k) chirp[k] = unit_root((k * k) % (2 * n), 2 * n, sign);
  std::vector<cd> a(m, cd{}), b(m, cd{});
  for (int64_t k = 0; k < n; ++k) a[k] = x[k] * chirp[k];
  b[0] = std::conj(chirp[0]);
  for (int64_t k = 1; k < n; ++k) b[k] = b[m - k] = std::conj(chirp[k]);
  radix2(a, -1);
  radix2(b, -1);
  for (std::size_t i = 0; i < m; ++i) a[i] *= b[i];
  radix2(a, +1);
  const double inv = 1.0 / static_cast<double>(m);
  for (int64_t k = 0; k < n; ++k) x[k] = a[k] * inv * chirp[k];
}

}  // namespace

void dft(std::vector<cd>& x, int sign) {
  if (x.size() <= 1) return;
  if (power_of_two(x.size())) radix2(x, sign);
  else bluestein(x, sign);
}

void dft_along(cd* data, const std::vector<int64_t>& shape, int64_t d, int sign) {
  int64_t inner = 1, outer = 1;
  for (std::size_t i = static_cast<std::size_t>(d) + 1; i < shape.size(); ++i) inner *= shape[i];
  for (int64_t i = 0; i < d; ++i) outer *= shape[i];
  const int64_t n = shape[d];
  std::vector<cd> line(static_cast<std::size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      cd* base = data + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) line[k] = base[k * inner];
      dft(line, sign);
      for (int64_t k = 0; k < n; ++k) base[k * inner] = line[k];
    }
  }
}

}  // namespace bp::ops::fft::ref
