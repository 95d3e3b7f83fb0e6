#pragma once
// Helpers of the matmul tests: random tensors, an fp64 oracle over strided
// views, and the largest error relative to the result's scale.

#include <cmath>
#include <random>
#include <vector>

#include "backplane/ops/matmul.h"

namespace bp::testing {

inline Tensor random_tensor(const Shape& shape, DType dtype, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> values(static_cast<std::size_t>(n));
  for (double& v : values) v = dist(gen);
  return Tensor::from_vector(values, shape).to(dtype);
}

// Element at a multi-index, as double (any float dtype).
inline double at(const Tensor& t, const std::vector<int64_t>& idx) {
  const Tensor d = t.to(DType::f64);
  int64_t off = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) off += idx[i] * d.stride(static_cast<int64_t>(i));
  return d.data_ptr<double>()[off];
}

// C = A @ B in fp64 for 2-D views.
inline std::vector<double> oracle_2d(const Tensor& a, const Tensor& b) {
  const Tensor a64 = a.to(DType::f64).contiguous(), b64 = b.to(DType::f64).contiguous();
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  const double* pa = a64.data_ptr<double>();
  const double* pb = b64.data_ptr<double>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t q = 0; q < k; ++q)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += pa[i * k + q] * pb[q * n + j];
  return c;
}

// max |got - want| / max(1, max |want|).
inline double max_rel_error(const Tensor& got, const std::vector<double>& want) {
  const Tensor g = got.to(DType::f64).contiguous();
  double scale = 1.0, err = 0.0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(g.data_ptr<double>()[i] - want[i]));
  return err / scale;
}

inline double tolerance(DType t) {
  switch (t) {
    case DType::f64: return 1e-12;
    case DType::f32: return 1e-5;
    default: return 2e-2;  // f16 / bf16 outputs round to 8-11 bits
  }
}

}  // namespace bp::testing
