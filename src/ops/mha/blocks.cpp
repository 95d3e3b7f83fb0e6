// The mha building blocks (blocks.h). Row loops run on OpenMP teams sized
// by threads::team_size (Note [Team sizes]); the inner loops are `omp simd`
// so the compiler vectorises them (reductions included) at the baseline ISA.

#include "ops/mha/blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backplane/error.h"
#include "backplane/ops/matmul.h"
#include "backplane/ops/sdpa.h"
#include "core/threads.h"

namespace bp::ops::mha::blocks {
namespace {

template <class T>
void softmax_rows(T* s, int64_t rows, int64_t cols) {
  const int team = threads::team_size(rows * cols / 16384 + 1);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t r = 0; r < rows; ++r) {
    T* x = s + r * cols;
    T mx = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < cols; ++j) mx = x[j] > mx ? x[j] : mx;
    if (mx == -std::numeric_limits<T>::infinity()) {  // attends to nothing: zeros, as sdpa
      for (int64_t j = 0; j < cols; ++j) x[j] = T(0);
      continue;
    }
    T sum = 0;
    for (int64_t j = 0; j < cols; ++j) sum += (x[j] = std::exp(x[j] - mx));
    const T inv = T(1) / sum;
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) x[j] *= inv;
  }
}

// scores [N, H, L, S] (contiguous) = scores * scale + mask (broadcast over N and H).
template <class T>
void scale_and_mask(Tensor& scores, const Tensor& mask, bool causal, double scale) {
  const int64_t N = scores.size(0), H = scores.size(1), L = scores.size(2), S = scores.size(3);
  T* s = scores.data_ptr<T>();
  const T* m = mask.defined() ? mask.data_ptr<T>() : nullptr;
  const int64_t mn = mask.defined() && mask.size(0) > 1 ? mask.stride(0) : 0;
  const int64_t mh = mask.defined() && mask.size(1) > 1 ? mask.stride(1) : 0;
  const int64_t ml = mask.defined() && mask.size(2) > 1 ? mask.stride(2) : 0;
  const T sc = static_cast<T>(scale);
  const T neg_inf = -std::numeric_limits<T>::infinity();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        T* row = s + ((n * H + h) * L + i) * S;
        const T* mrow = m ? m + n * mn + h * mh + i * ml : nullptr;
        for (int64_t j = 0; j < S; ++j) {
          T x = row[j] * sc;
          if (mrow) x += mrow[j];
          if (causal && j > i) x = neg_inf;
          row[j] = x;
        }
      }
}


template <class T>
void layer_norm_row(const T* x, const T* w, const T* b, double eps, int64_t E, T* out) {
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < E; ++j) sum += x[j];
  const T mean = sum / T(E);
  T sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t j = 0; j < E; ++j) sq += (x[j] - mean) * (x[j] - mean);
  const T inv = T(1) / std::sqrt(sq / T(E) + static_cast<T>(eps));
#pragma omp simd
  for (int64_t j = 0; j < E; ++j) {
    T y = (x[j] - mean) * inv;
    if (w) y *= w[j];
    if (b) y += b[j];
    out[j] = y;
  }
}

template <class T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

template <class T>
T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(0.70710678118654752440)));
}

template <class T>
void bias_activation_t(Tensor& x, const Tensor& bias, Activation act) {
  const int64_t C = x.size(-1), rows = x.numel() / C;
  T* p = x.data_ptr<T>();
  const T* b = ptr_or_null<T>(bias);
  const int team = threads::team_size(rows * C / 16384 + 1);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t r = 0; r < rows; ++r) {
    T* row = p + r * C;
    if (act == Activation::relu) {
#pragma omp simd
      for (int64_t j = 0; j < C; ++j) {
        const T y = row[j] + (b ? b[j] : T(0));
        row[j] = y > T(0) ? y : T(0);
      }
    } else {
      for (int64_t j = 0; j < C; ++j) row[j] = gelu(row[j] + (b ? b[j] : T(0)));
    }
  }
}

template <class T>
void bias_residual_norm_t(const Tensor& y, const Tensor& bias, const Tensor& residual, const Tensor& nw,
                          const Tensor& nb, double eps, bool norm, Tensor& out) {
  const int64_t E = y.size(-1), rows = y.numel() / E;
  const T* yp = y.data_ptr<T>();
  const T* rp = residual.data_ptr<T>();
  T* op = out.data_ptr<T>();
  const T* b = ptr_or_null<T>(bias);
  const T* w = ptr_or_null<T>(nw);
  const T* nbp = ptr_or_null<T>(nb);
  const int team = threads::team_size(rows * E / 16384 + 1);
#pragma omp parallel num_threads(team) if (team > 1)
  {
    std::vector<T> s(static_cast<std::size_t>(E));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const T* yr = yp + r * E;
      const T* rr = rp + r * E;
#pragma omp simd
      for (int64_t j = 0; j < E; ++j) s[j] = yr[j] + rr[j] + (b ? b[j] : T(0));
      if (norm)
        layer_norm_row(s.data(), w, nbp, eps, E, op + r * E);
      else
        std::copy(s.begin(), s.end(), op + r * E);
    }
  }
}

}  // namespace

Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal, Tensor* weights) {
  if (weights == nullptr) return bp::sdpa(q, k, v, mask, 0.0, causal && !mask.defined()).contiguous();
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  Tensor scores = bp::matmul(q, k.T()).contiguous();
  const int64_t rows = scores.numel() / scores.size(-1);
  if (scores.dtype() == DType::f64) {
    scale_and_mask<double>(scores, mask, causal && !mask.defined(), scale);
    softmax_rows(scores.data_ptr<double>(), rows, scores.size(-1));
  } else {
    scale_and_mask<float>(scores, mask, causal && !mask.defined(), scale);
    softmax_rows(scores.data_ptr<float>(), rows, scores.size(-1));
  }
  *weights = scores;
  return bp::matmul(scores, v).contiguous();
}

void copy_rows(const Tensor& dst, const Tensor& src) {
  if (dst.shape() != src.shape() || dst.dtype() != src.dtype() || dst.ndim() > 4 || dst.ndim() == 0 ||
      dst.stride(-1) != 1 || src.stride(-1) != 1)
    throw_runtime("mha", "copy_rows: views of one shape and dtype, last stride 1, at most 4 dims (a bug)");
  Shape shape(4 - dst.ndim(), 1), ds(4 - dst.ndim(), 0), ss(4 - dst.ndim(), 0);
  for (int64_t d = 0; d < dst.ndim(); ++d)
    shape.push_back(dst.size(d)), ds.push_back(dst.stride(d)), ss.push_back(src.stride(d));
  const std::size_t item = dst.itemsize(), bytes = static_cast<std::size_t>(shape[3]) * item;
  auto* out = static_cast<char*>(dst.data());
  const auto* in = static_cast<const char*>(src.data());
  for (int64_t a = 0; a < shape[0]; ++a)
    for (int64_t b = 0; b < shape[1]; ++b)
      for (int64_t c = 0; c < shape[2]; ++c)
        std::memcpy(out + static_cast<std::size_t>(a * ds[0] + b * ds[1] + c * ds[2]) * item,
                    in + static_cast<std::size_t>(a * ss[0] + b * ss[1] + c * ss[2]) * item, bytes);
}

Tensor transposed_copy(const Tensor& w) {
  const int64_t R = w.size(0), C = w.size(1), rs = w.stride(0), cs = w.stride(1);
  Tensor out = Tensor::empty({C, R}, w.dtype());
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* src = w.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    constexpr int64_t kTile = 32;
    for (int64_t r0 = 0; r0 < R; r0 += kTile)
      for (int64_t c0 = 0; c0 < C; c0 += kTile)
        for (int64_t r = r0; r < std::min(R, r0 + kTile); ++r)
          for (int64_t c = c0; c < std::min(C, c0 + kTile); ++c) dst[c * R + r] = src[r * rs + c * cs];
  };
  w.dtype() == DType::f64 ? run(0.0) : run(0.0f);
  return out;
}

Tensor merge_heads(const Tensor& o) {
  const int64_t N = o.size(0), H = o.size(1), L = o.size(2), D = o.size(3);
  Tensor out = Tensor::empty({N, L, H * D}, o.dtype());
  copy_rows(out.reshape({N, L, H, D}).transpose(1, 2), o.contiguous());
  return out;
}


Tensor mean_heads(const Tensor& w) {
  const int64_t N = w.size(0), H = w.size(1), LS = w.size(2) * w.size(3);
  Tensor out = Tensor::zeros({N, w.size(2), w.size(3)}, w.dtype());
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* src = w.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t j = 0; j < LS; ++j) dst[n * LS + j] += src[(n * H + h) * LS + j] / T(H);
  };
  w.dtype() == DType::f64 ? run(0.0) : run(0.0f);
  return out;
}

void add_(Tensor& x, const Tensor& y) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T* a = x.data_ptr<T>();
    const T* b = y.data_ptr<T>();
    const int64_t n = x.numel();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) a[i] += b[i];
  };
  x.dtype() == DType::f64 ? run(0.0) : run(0.0f);
}

Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const int64_t E = x.size(-1), rows = x.numel() / E;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* xp = x.data_ptr<T>();
    T* op = out.data_ptr<T>();
    for (int64_t r = 0; r < rows; ++r) layer_norm_row(xp + r * E, ptr_or_null<T>(w), ptr_or_null<T>(b), eps, E, op + r * E);
  };
  x.dtype() == DType::f64 ? run(0.0) : run(0.0f);
  return out;
}

void add_bias_(Tensor& x, const Tensor& bias) {
  if (!bias.defined()) return;
  const int64_t C = x.size(-1), rows = x.numel() / C;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T* p = x.data_ptr<T>();
    const T* b = bias.data_ptr<T>();
    const int team = threads::team_size(rows * C / 16384 + 1);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int64_t r = 0; r < rows; ++r) {
      T* row = p + r * C;
#pragma omp simd
      for (int64_t j = 0; j < C; ++j) row[j] += b[j];
    }
  };
  x.dtype() == DType::f64 ? run(0.0) : run(0.0f);
}

void bias_activation_(Tensor& x, const Tensor& bias, Activation act) {
  if (act == Activation::other) throw_runtime("mha", "a Python activation cannot run in C++ (a bug: the checks refuse it)");
  x.dtype() == DType::f64 ? bias_activation_t<double>(x, bias, act) : bias_activation_t<float>(x, bias, act);
}

void bias_residual_norm(const Tensor& y, const Tensor& bias, const Tensor& residual, const Tensor& norm_w,
                        const Tensor& norm_b, double eps, bool norm, Tensor& out) {
  y.dtype() == DType::f64 ? bias_residual_norm_t<double>(y, bias, residual, norm_w, norm_b, eps, norm, out)
                          : bias_residual_norm_t<float>(y, bias, residual, norm_w, norm_b, eps, norm, out);
}

}  // namespace bp::ops::mha::blocks
