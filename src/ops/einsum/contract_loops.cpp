// The direct loops of einsum (contract_loops.h).

#include "ops/einsum/contract_loops.h"

#include <algorithm>

#include "backplane/error.h"

namespace bp::ops::einsum {
namespace {

template <class T>
inline double load(const T* p) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return to_float(*p);
  } else {
    return static_cast<double>(*p);
  }
}

template <class T>
inline T from_double(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{half_bits_from_double(v)};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{bfloat16_bits_from_double(v)};
  } else {
    return static_cast<T>(v);
  }
}

// An odometer over a shape that keeps one offset per side.
struct Odometer {
  const Shape& shape;
  std::vector<int64_t> index;
  Odometer(const Shape& s) : shape(s), index(s.size(), 0) {}
  // Sets the index to the row-major position `flat`.
  void seek(int64_t flat) {
    for (std::size_t d = shape.size(); d-- > 0;) {
      index[d] = flat % shape[d];
      flat /= shape[d];
    }
  }
  // Advances by one; strides[side][d] moves offsets[side].
  template <int Sides>
  void next(const int64_t* const* strides, int64_t* offsets) {
    for (std::size_t d = shape.size(); d-- > 0;) {
      for (int s = 0; s < Sides; ++s) offsets[s] += strides[s][d];
      if (++index[d] < shape[d]) return;
      for (int s = 0; s < Sides; ++s) offsets[s] -= strides[s][d] * shape[d];
      index[d] = 0;
    }
  }
};

template <class T, int Sides>
void run(const std::vector<LoopSide>& sides, const Shape& out_shape, const Shape& sum_shape, T* out) {
  int64_t total = 1, sum_total = 1;
  for (int64_t s : out_shape) total *= s;
  for (int64_t s : sum_shape) sum_total *= s;
  const T* data[Sides];
  const int64_t* out_strides[Sides];
  const int64_t* sum_strides[Sides];
  for (int s = 0; s < Sides; ++s) {
    data[s] = static_cast<const T*>(sides[s].data);
    out_strides[s] = sides[s].out_strides.data();
    sum_strides[s] = sides[s].sum_strides.data();
  }
  const std::size_t ns = sum_shape.size();
  const int64_t inner = ns ? sum_shape[ns - 1] : 1;
  int64_t inner_stride[Sides];
  for (int s = 0; s < Sides; ++s) inner_stride[s] = ns ? sum_strides[s][ns - 1] : 0;
  const Shape outer_sum(sum_shape.begin(), sum_shape.end() - (ns ? 1 : 0));
  const int64_t outer_total = sum_total / std::max<int64_t>(inner, 1);
  constexpr int64_t kChunk = 256;
  const int64_t chunks = (total + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (total * sum_total > (int64_t{1} << 16))
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunk, end = std::min(total, begin + kChunk);
    Odometer o(out_shape);
    o.seek(begin);
    int64_t base[Sides];
    for (int s = 0; s < Sides; ++s) {
      base[s] = 0;
      for (std::size_t d = 0; d < out_shape.size(); ++d) base[s] += o.index[d] * out_strides[s][d];
    }
    for (int64_t i = begin; i < end; ++i) {
      double acc = 0;
      Odometer so(outer_sum);
      int64_t off[Sides];
      for (int s = 0; s < Sides; ++s) off[s] = base[s];
      for (int64_t r = 0; r < outer_total; ++r) {
        for (int64_t k = 0; k < inner; ++k) {
          double v = load(data[0] + off[0] + k * inner_stride[0]);
          if constexpr (Sides == 2) v *= load(data[1] + off[1] + k * inner_stride[1]);
          acc += v;
        }
        so.next<Sides>(sum_strides, off);
      }
      out[i] = from_double<T>(acc);
      o.next<Sides>(out_strides, base);
    }
  }
}

template <class T>
void dispatch_sides(const std::vector<LoopSide>& sides, const Shape& out_shape, const Shape& sum_shape, Tensor& out) {
  T* o = static_cast<T*>(out.data());
  if (sides.size() == 1)
    run<T, 1>(sides, out_shape, sum_shape, o);
  else
    run<T, 2>(sides, out_shape, sum_shape, o);
}

}  // namespace

void contract_loops(const std::vector<LoopSide>& sides, const Shape& out_shape, const Shape& sum_shape, Tensor& out) {
  switch (out.dtype()) {
    case DType::f16: return dispatch_sides<Half>(sides, out_shape, sum_shape, out);
    case DType::bf16: return dispatch_sides<BFloat16>(sides, out_shape, sum_shape, out);
    case DType::f32: return dispatch_sides<float>(sides, out_shape, sum_shape, out);
    case DType::f64: return dispatch_sides<double>(sides, out_shape, sum_shape, out);
    default: throw_bad_value("einsum", dtype_name(out.dtype()), "float16, bfloat16, float32 or float64");
  }
}

}  // namespace bp::ops::einsum
