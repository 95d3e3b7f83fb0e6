// ref:any: the reference, for every transform kind, dtype and stride, in
// complex128 through the reference DFT (ref_dft.h), which shares nothing
// with FFTW or cuFFT. It accepts every valid CPU problem, so it is the
// list's last entry.
//
// A c2r is computed as numpy.fft.irfftn (and PyTorch on the CPU) defines
// it: inverse transforms along every dim but the last, then along the last
// the Hermitian extension X[n - k] = conj(X[k]) of the n / 2 + 1 given
// points, of which only the real parts of X[0] and (n even) X[n / 2] count.

#include <complex>

#include "backplane/dispatch_checks.h"
#include "ops/fft/params.h"
#include "ops/fft/ref_dft.h"

namespace bp::ops::fft {
namespace {

using ref::cd;

// The dense complex128 copy of t.
std::vector<cd> complex_values(const Tensor& t) {
  const Tensor c = t.to(DType::c128).contiguous();
  const cd* p = c.data_ptr<cd>();
  return std::vector<cd>(p, p + c.numel());
}

void run(const Params& p) {
  const int64_t last = p.dims.back();
  Shape shape = p.in.shape();
  std::vector<cd> x = complex_values(p.in);
  if (p.conj_in)
    for (cd& v : x) v = std::conj(v);
  const int sign = p.forward ? -1 : +1;
  std::vector<cd> result;
  Shape result_shape = p.out.shape();
  if (p.kind == Kind::c2r) {
    // Every dim but the last, on the half spectrum; then the last, extended.
    for (std::size_t i = 0; i + 1 < p.dims.size(); ++i) ref::dft_along(x.data(), shape, p.dims[i], sign);
    const int64_t n = p.n.back(), half = shape[last];
    Shape full_shape = shape;
    full_shape[last] = n;
    int64_t inner = 1, outer = 1;
    for (std::size_t i = static_cast<std::size_t>(last) + 1; i < shape.size(); ++i) inner *= shape[i];
    for (int64_t i = 0; i < last; ++i) outer *= shape[i];
    std::vector<cd> full(static_cast<std::size_t>(outer * n * inner));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        for (int64_t k = 0; k < n; ++k) {
          const int64_t src = k < half ? k : n - k;  // k >= half: mirrored from n - k < half
          cd v = x[(o * half + src) * inner + i];
          if (k >= half || (k == n - k && k != 0)) v = std::conj(v);
          if (k == 0 || 2 * k == n) v = cd(v.real(), 0.0);
          full[(o * n + k) * inner + i] = v;
        }
    ref::dft_along(full.data(), full_shape, last, sign);
    result = std::move(full);
  } else {
    for (int64_t d : p.dims) ref::dft_along(x.data(), shape, d, sign);
    if (p.kind == Kind::r2c) {
      // Keep the n / 2 + 1 non-negative frequencies of the last dim.
      const int64_t n = shape[last], keep = result_shape[last];
      int64_t inner = 1, outer = 1;
      for (std::size_t i = static_cast<std::size_t>(last) + 1; i < shape.size(); ++i) inner *= shape[i];
      for (int64_t i = 0; i < last; ++i) outer *= shape[i];
      result.resize(static_cast<std::size_t>(outer * keep * inner));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < keep; ++k)
          for (int64_t i = 0; i < inner; ++i) result[(o * keep + k) * inner + i] = x[(o * n + k) * inner + i];
    } else {
      result = std::move(x);
    }
  }
  for (cd& v : result) {
    v *= p.scale;
    if (p.conj_out) v = std::conj(v);
  }
  const Tensor r = Tensor::from_vector(result, result_shape);
  Tensor out = p.out;
  out.copy_from(p.kind == Kind::c2r ? r.to(DType::f64) : r);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_ref() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::c64, DType::c128}));
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", dispatch::Properties{}, std::move(checks), run);
}

}  // namespace bp::ops::fft
