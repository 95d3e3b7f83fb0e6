// Helpers the fft implementations share: the batch dims of a problem, the
// c2r input copy, and the norm's scaling pass (params.h).

#include <algorithm>
#include <complex>

#include "ops/fft/params.h"

namespace bp::ops::fft {

std::vector<int64_t> batch_dims(const Params& p) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < p.out.ndim(); ++d)
    if (std::find(p.dims.begin(), p.dims.end(), d) == p.dims.end()) out.push_back(d);
  return out;
}

Tensor complex_copy(const Tensor& t, DType dtype, bool conjugate) {
  Tensor c = t.to(dtype).contiguous();
  if (c.storage() == t.storage()) c = c.clone();  // never the caller's memory: the transform overwrites it
  if (conjugate) scale_and_conj(c, 1.0, true);
  return c;
}

namespace {
template <class R>
void scale_complex(std::complex<R>* x, int64_t n, R s, bool conjugate) {
  R* v = reinterpret_cast<R*>(x);
  const R si = conjugate ? -s : s;
  for (int64_t i = 0; i < n; ++i) {
    v[2 * i] *= s;
    v[2 * i + 1] *= si;
  }
}
template <class R>
void scale_real(R* x, int64_t n, R s) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}
}  // namespace

void scale_and_conj(const Tensor& t, double scale, bool conjugate) {
  if (scale == 1.0 && !conjugate) return;
  const int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::c64: scale_complex(t.data_ptr<std::complex<float>>(), n, static_cast<float>(scale), conjugate); break;
    case DType::c128: scale_complex(t.data_ptr<std::complex<double>>(), n, scale, conjugate); break;
    case DType::f32: scale_real(t.data_ptr<float>(), n, static_cast<float>(scale)); break;
    case DType::f64: scale_real(t.data_ptr<double>(), n, scale); break;
    default: throw_runtime("fft", std::string("fft: cannot scale a tensor of dtype ") + dtype_name(t.dtype()));
  }
}

}  // namespace bp::ops::fft
