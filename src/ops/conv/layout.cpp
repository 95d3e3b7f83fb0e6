// Layout copies for the channels-last fp32 kernels (layout.h).

#include "ops/conv/layout.h"

#include <algorithm>
#include <vector>

#include "core/threads.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/transpose.h"
#include "ops/conv/params.h"

namespace bp::ops::conv {
namespace {

// f32/f64 elements (the 16-bit types go through the vectorised kernels).
template <class T>
float load(const T* p) {
  return static_cast<float>(*p);
}
template <class T>
void store(T* p, float v) {
  *p = static_cast<T>(v);
}

template <class T>
constexpr bool is_16bit = std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>;
template <class T>
constexpr DType dtype_of = std::is_same_v<T, BFloat16> ? DType::bf16 : DType::f16;

using kernels::cpu::gemm_isa_of;

// One row of n elements to fp32 (widen_row) or from it (narrow_row): the
// vectorised kernel resolved for the loop for bf16/f16, element by element
// for f64.
template <class T>
struct Rows {
  kernels::cpu::WidenFn widen = nullptr;
  kernels::cpu::RoundFn round = nullptr;
  explicit Rows(kernels::cpu::GemmIsa isa) {
    if constexpr (is_16bit<T>) {
      widen = kernels::cpu::widen_variant(dtype_of<T>, isa);
      round = kernels::cpu::round_variant(dtype_of<T>, isa);
    }
  }
  void widen_row(const T* src, float* dst, int64_t n) const {
    if constexpr (is_16bit<T>) widen(reinterpret_cast<const uint16_t*>(src), dst, n);
    else for (int64_t i = 0; i < n; ++i) dst[i] = load(src + i);
  }
  void narrow_row(const float* src, T* dst, int64_t n) const {
    if constexpr (is_16bit<T>) round(src, reinterpret_cast<uint16_t*>(dst), n);
    else for (int64_t i = 0; i < n; ++i) store(dst + i, src[i]);
  }
};

// fp32 to fp32: the transpose kernel, on slabs of kSlab points of every
// channel (an image's c x kSlab block is one transpose).
constexpr int64_t kSlab = 256;
void transpose_images(const float* src, float* dst, int64_t n, int64_t c, int64_t points, bool to_cl,
                      kernels::cpu::GemmIsa /*no conversion*/) {
  const int64_t slabs = (points + kSlab - 1) / kSlab, items = n * slabs;
  const int team = threads::team_size(std::min<int64_t>(items, n * c * points / 65536 + 1));
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t item = 0; item < items; ++item) {
    const int64_t b = item / slabs, s0 = item % slabs * kSlab, width = std::min(kSlab, points - s0);
    const float* in = src + b * c * points;
    float* out = dst + b * c * points;
    if (to_cl) kernels::cpu::transpose_f32(in + s0, c, width, points, out + s0 * c, c);
    else kernels::cpu::transpose_f32(in + s0 * c, width, c, c, out + s0, points);
  }
}

// For each image: dst[s][c] = src[c][s] (to_cl) or dst[c][s] = src[s][c], S
// spatial points, C channels, both dense, with a conversion: per slab of
// kConvertSlab points, the planar side converted row by row (contiguous:
// the loops vectorise) through a per-thread fp32 block, and the transpose
// done by transpose_f32 on that block. The element-by-element blocked walk
// it replaces (a strided load and a conversion per element) was 40-50% of
// a bf16 NCHW depthwise convolution's time (8 x 576 x 14 x 14, stride 2),
// and its speed moved by a fifth with the code's alignment.
constexpr int64_t kConvertSlab = 32;  // c x 32 fp32: 120 KiB at 960 channels, in L2
template <class S, class D>
void transpose_images(const S* src, D* dst, int64_t n, int64_t c, int64_t points, bool to_cl,
                      kernels::cpu::GemmIsa isa) {
  const Rows<std::conditional_t<std::is_same_v<D, float>, S, D>> rows(isa);  // the side that is not fp32
  const int64_t slabs = (points + kConvertSlab - 1) / kConvertSlab, items = n * slabs;
  const int team = threads::team_size(std::min<int64_t>(items, n * c * points / 65536 + 1));
#pragma omp parallel num_threads(team) if (team > 1)
  {
    std::vector<float> block(static_cast<std::size_t>(c * kConvertSlab));
    float* const t = block.data();
#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t b = item / slabs, s0 = item % slabs * kConvertSlab, width = std::min(kConvertSlab, points - s0);
      const S* in = src + b * c * points;
      D* out = dst + b * c * points;
      if constexpr (std::is_same_v<D, float>) {  // to channels-last: widen the planar rows, transpose into place
        if (to_cl) {
          for (int64_t ch = 0; ch < c; ++ch) rows.widen_row(in + ch * points + s0, t + ch * width, width);
          kernels::cpu::transpose_f32(t, c, width, width, out + s0 * c, c);
        }
      }
      if constexpr (std::is_same_v<S, float>) {  // from channels-last: transpose into the block, narrow its rows
        if (!to_cl) {
          kernels::cpu::transpose_f32(in + s0 * c, width, c, c, t, width);
          for (int64_t ch = 0; ch < c; ++ch) rows.narrow_row(t + ch * width, out + ch * points + s0, width);
        }
      }
    }
  }
}

// Dense runs of elements converted: bf16/f16 to and from fp32 by the
// vectorised kernels (kernels/cpu/convert.h; the scalar rounding loop was a
// tenth of a bf16 channels-last Winograd call at 8 x 64 x 56 x 56), f64
// element by element.
template <class S, class D>
void convert_flat(const S* src, D* dst, int64_t count, kernels::cpu::GemmIsa isa) {
  if constexpr (std::is_same_v<D, float> && is_16bit<S>) {
    kernels::cpu::widen_to_f32(dtype_of<S>, isa, reinterpret_cast<const uint16_t*>(src), dst, count);
  } else if constexpr (std::is_same_v<S, float> && is_16bit<D>) {
    kernels::cpu::round_f32_to(dtype_of<D>, isa, src, reinterpret_cast<uint16_t*>(dst), count);
  } else {
    const int team = threads::team_size(count / 65536 + 1);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
    for (int64_t i = 0; i < count; ++i) store(dst + i, load(src + i));
  }
}

// Calls fn(T{}) with T the C++ type of a float dtype.
template <class Fn>
void by_dtype(DType d, Fn&& fn) {
  switch (d) {
    case DType::f32: fn(float{}); break;
    case DType::f64: fn(double{}); break;
    case DType::bf16: fn(BFloat16{}); break;
    case DType::f16: fn(Half{}); break;
    default: throw_bad_value("conv layout copy", dtype_name(d), "a float dtype");
  }
}

int64_t points_of(const Tensor& t) { return t.size(2) * t.size(3) * t.size(4); }

}  // namespace

void to_channels_last_f32(const Tensor& t, Tensor& out, kernels::cpu::ConvIsa conv_isa) {
  const kernels::cpu::GemmIsa isa = gemm_isa_of(conv_isa);
  float* dst = out.data_ptr<float>();
  if (dense_ndhwc(t) || dense_ncdhw(t)) {
    const bool cl = dense_ndhwc(t);
    by_dtype(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = static_cast<const T*>(t.data());
      if (cl) convert_flat(src, dst, t.numel(), isa);
      else transpose_images(src, dst, t.size(0), t.size(1), points_of(t), true, isa);
    });
    return;
  }
  out.copy_from(t);  // any other strides: the general walk
}

Tensor contiguous_f32(const Tensor& t, kernels::cpu::ConvIsa isa) {
  if (!(t.dtype() == DType::bf16 || t.dtype() == DType::f16) || !t.is_contiguous())
    return t.to(DType::f32).contiguous();
  Tensor out = Tensor::empty(t.shape(), DType::f32);
  kernels::cpu::widen_to_f32(t.dtype(), gemm_isa_of(isa), static_cast<const uint16_t*>(t.data()),
                             out.data_ptr<float>(), t.numel());
  return out;
}

void store_channels_last_f32(const Tensor& src, const Tensor& dst, kernels::cpu::ConvIsa conv_isa) {
  const kernels::cpu::GemmIsa isa = gemm_isa_of(conv_isa);
  const float* in = src.data_ptr<float>();
  if (dense_ndhwc(dst) || dense_ncdhw(dst)) {
    const bool cl = dense_ndhwc(dst);
    by_dtype(dst.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* out = static_cast<T*>(dst.data());
      if (cl) convert_flat(in, out, dst.numel(), isa);
      else transpose_images(in, out, dst.size(0), dst.size(1), points_of(dst), false, isa);
    });
    return;
  }
  Tensor target = dst;
  target.copy_from(src);
}

}  // namespace bp::ops::conv
