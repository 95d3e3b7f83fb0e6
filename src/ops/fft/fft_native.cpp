// native:stockham: every transform kind on Backplane's own mixed-radix
// Stockham FFT with Bluestein for large prime factors (Note [Stockham FFT]
// in kernels/cpu/fft_stockham.h), complex64 in float and complex128 in
// double; no library, so it stands in for fftw:dft when FFTW is absent or
// excluded, and checks it.
//
// A multi-dim transform is 1-D passes along each dim of a dense array: the
// input (any strides) is first copied into the output (c2c), then each dim
// is transformed in place. The real kinds go through the complex transform:
// an r2c transforms its real input, widened to complex, along the halved
// dim, keeps the n / 2 + 1 non-negative frequencies and transforms the
// other dims on those; a c2r transforms the other dims of (a copy of) its
// half spectrum, extends the halved dim to n points by Hermitian symmetry
// as numpy.fft.irfftn does (ref_dft's comment), transforms it and keeps the
// real parts.

#include <algorithm>
#include <complex>

#include "backplane/dispatch_checks.h"
#include "backplane/runtime.h"
#include "kernels/cpu/fft_stockham.h"
#include "ops/fft/params.h"

namespace bp::ops::fft {
namespace {

// Transforms the dense complex tensor t along dim d.
template <class R>
void along(Tensor& t, int64_t d, int sign) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= t.size(i);
  for (int64_t i = d + 1; i < t.ndim(); ++i) inner *= t.size(i);
  kernels::fft::dft_lines<R>(t.data_ptr<std::complex<R>>(), outer, t.size(d), inner, sign, get_num_threads());
}

// The n points along `last` of the dense half spectrum h: X[n - k] = conj(X[k]),
// with the imaginary parts of X[0] and (n even) X[n / 2] dropped.
template <class R>
Tensor hermitian_extension(const Tensor& h, int64_t last, int64_t n, DType dtype) {
  Shape shape = h.shape();
  const int64_t half = shape[last];
  shape[last] = n;
  Tensor full = Tensor::empty(shape, dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < last; ++i) outer *= shape[i];
  for (int64_t i = last + 1; i < static_cast<int64_t>(shape.size()); ++i) inner *= shape[i];
  const auto* src = h.data_ptr<std::complex<R>>();
  auto* dst = full.data_ptr<std::complex<R>>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k) {
      const bool mirrored = k >= half;
      const std::complex<R>* from = src + (o * half + (mirrored ? n - k : k)) * inner;
      std::complex<R>* to = dst + (o * n + k) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        std::complex<R> v = from[i];
        if (mirrored || (2 * k == n && k != 0)) v = std::conj(v);
        if (k == 0 || 2 * k == n) v = std::complex<R>(v.real(), 0);
        to[i] = v;
      }
    }
  return full;
}

template <class R>
void run_in(const Params& p) {
  const int sign = p.forward ? -1 : +1;
  const int64_t last = p.dims.empty() ? 0 : p.dims.back();
  Tensor out = p.out;
  switch (p.kind) {
    case Kind::c2c:
      out.copy_from(p.in);
      for (int64_t d : p.dims) along<R>(out, d, sign);
      break;
    case Kind::r2c: {
      Tensor full = p.in.to(p.dtype).contiguous();
      if (full.storage() == p.in.storage()) full = full.clone();
      along<R>(full, last, -1);
      out.copy_from(full.slice(last, 0, out.size(last)));
      for (std::size_t i = 0; i + 1 < p.dims.size(); ++i) along<R>(out, p.dims[i], -1);
      break;
    }
    case Kind::c2r: {
      Tensor half = complex_copy(p.in, p.dtype, p.conj_in);
      for (std::size_t i = 0; i + 1 < p.dims.size(); ++i) along<R>(half, p.dims[i], +1);
      Tensor full = hermitian_extension<R>(half, last, p.n.back(), p.dtype);
      along<R>(full, last, +1);
      const auto* src = full.data_ptr<std::complex<R>>();
      R* dst = out.data_ptr<R>();
      for (int64_t i = 0; i < out.numel(); ++i) dst[i] = src[i].real();
      break;
    }
  }
  scale_and_conj(out, p.scale, p.conj_out);
}

void run(const Params& p) {
  if (p.is_double()) run_in<double>(p);
  else run_in<float>(p);
}

}  // namespace

std::vector<std::string> native_notes(const Params& p) {
  if (!p.device.is_cpu() || p.out.numel() == 0 || p.dims.empty()) return {};
  std::string text = "native:stockham: ";
  std::vector<int64_t> seen;
  for (int64_t n : p.n) {
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    text += (seen.empty() ? "" : "; ") + kernels::fft::describe(n);
    seen.push_back(n);
  }
  if (p.kind != Kind::c2c) text += " (the real kind through the complex transform)";
  return {text};
}

std::unique_ptr<dispatch::Implementation> make_native() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::c64, DType::c128}));
  dispatch::Properties props;
  props.workspace = "a scratch line block per thread; per-size plans (twiddles) in a small cache of its own";
  return std::make_unique<dispatch::Impl<Params>>("native:stockham", "cpu", props, std::move(checks), run);
}

}  // namespace bp::ops::fft
