#pragma once
// Helpers of the sdpa tests: an fp64 oracle written from the definition
// (softmax(q·kᵀ·scale + mask)·v, one row at a time, no shared code with the
// implementations) over 4-D (B, H, L, E) inputs, and error measurement.

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "backplane/ops/sdpa.h"
#include "ops/matmul_test_util.h"

namespace bp::testing {

// A 4-D f64 tensor read with broadcasting (size-1 dims repeat).
struct View4 {
  Tensor keep;  // owns the f64 copy
  const double* data = nullptr;
  int64_t st[4] = {};
  View4() = default;
  explicit View4(const Tensor& t) : keep(t.to(DType::f64)), data(keep.data_ptr<double>()) {
    for (int i = 0; i < 4; ++i) st[i] = keep.size(i) == 1 ? 0 : keep.stride(i);
  }
  double operator()(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return data[a * st[0] + b * st[1] + c * st[2] + d * st[3]];
  }
};

// mask: undefined, bool or float, 4-D (broadcastable). Returns (B, Hq, L, Ev) row-major.
inline std::vector<double> sdpa_oracle(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                       bool causal, std::optional<double> scale = std::nullopt) {
  const View4 q64(q), k64(k), v64(v);
  const View4 m64 = mask.defined() ? View4(mask) : View4();
  const bool bool_mask = mask.defined() && mask.dtype() == DType::boolean;
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), E = q.size(3), S = k.size(2), Ev = v.size(3);
  const int64_t group = H / k.size(1);
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E));
  std::vector<double> out(static_cast<std::size_t>(B * H * L * Ev), 0.0), w(static_cast<std::size_t>(S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < S; ++j) {
          double s = 0;
          for (int64_t e = 0; e < E; ++e) s += q64(b, h, i, e) * k64(b, h / group, j, e);
          s *= sc;
          if (m64.data) {
            const double mv = m64(b, h, i, j);
            s = bool_mask ? (mv != 0 ? s : -INFINITY) : s + mv;
          }
          if (causal && j > i) s = -INFINITY;
          w[j] = s;
          mx = (s > mx || std::isnan(s)) ? s : mx;  // a NaN score makes the row NaN, as PyTorch's softmax
        }
        if (std::isinf(mx) && mx < 0) continue;  // fully masked row: 0
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += (w[j] = std::exp(w[j] - mx));
        for (int64_t e = 0; e < Ev; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < S; ++j) acc += w[j] / sum * v64(b, h / group, j, e);
          out[static_cast<std::size_t>(((b * H + h) * L + i) * Ev + e)] = acc;
        }
      }
  return out;
}

// Whether got has NaN exactly where want has, the same infinities, and is
// within tol elsewhere; the first mismatch is described in `why`.
inline bool same_with_nans(const Tensor& got, const std::vector<double>& want, double tol, std::string& why) {
  const Tensor g = got.to(DType::f64).contiguous();
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double a = g.data_ptr<double>()[i], b = want[i];
    const bool ok = std::isnan(b) ? std::isnan(a) : (std::isinf(b) ? a == b : std::abs(a - b) <= tol);
    if (!ok) {
      why = "element " + std::to_string(i) + ": got " + std::to_string(a) + ", want " + std::to_string(b);
      return false;
    }
  }
  return true;
}

// Largest |got - want| over the elements of a contiguous-able result.
inline double max_abs_error(const Tensor& got, const std::vector<double>& want) {
  const Tensor g = got.to(DType::f64).contiguous();
  double err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(g.data_ptr<double>()[i] - want[i]));
  return err;
}

inline double sdpa_tolerance(DType t) {
  switch (t) {
    case DType::f64: return 1e-10;
    case DType::f32: return 2e-5;
    case DType::bf16: return 2e-2;
    default: return 3e-3;
  }
}

inline Tensor random_bool(const Shape& shape, uint32_t seed, double keep = 0.7) {
  std::mt19937 gen(seed);
  std::bernoulli_distribution d(keep);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<uint8_t> bits(static_cast<std::size_t>(n));
  for (auto& b : bits) b = d(gen);
  return Tensor::from_buffer(bits.data(), shape, DType::boolean);
}

// Restores the SDPA flags a test changes.
struct SdpFlags {
  bool flash = backends::cuda::flash_sdp_enabled(), eff = backends::cuda::mem_efficient_sdp_enabled(),
       math = backends::cuda::math_sdp_enabled(), reduce = backends::cuda::fp16_bf16_reduction_math_sdp_allowed();
  ~SdpFlags() {
    backends::cuda::set_flash_sdp_enabled(flash);
    backends::cuda::set_mem_efficient_sdp_enabled(eff);
    backends::cuda::set_math_sdp_enabled(math);
    backends::cuda::set_fp16_bf16_reduction_math_sdp_allowed(reduce);
  }
};

// The explain row of implementation `name`.
inline const dispatch::Row& row(const dispatch::Decision& d, const std::string& name) {
  for (const auto& r : d.rows)
    if (r.implementation == name) return r;
  throw std::runtime_error("no row " + name);
}

// Every reason of a row, one per line.
inline std::string reasons(const dispatch::Row& r) {
  std::string out;
  for (const auto& x : r.reasons) out += x.text() + "\n";
  return out;
}

}  // namespace bp::testing
