// Shared helpers of the conv implementations (params.h).

#include "ops/conv/params.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include "kernels/cpu/scratch.h"
#include "ops/conv/impls.h"
#include "ops/conv/layout.h"

namespace bp::ops::conv {
namespace {

// Dense in the dim order `order` (outermost first): every dim of size > 1
// has the stride of a packed array in that order.
bool dense_in_order(const Tensor& t, const int (&order)[5]) {
  int64_t expected = 1;
  for (int i = 4; i >= 0; --i) {
    const int d = order[i];
    if (t.size(d) != 1 && t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

}  // namespace

double Params::flops() const {
  const double spatial_work = transposed ? double(in_volume()) : double(out_volume());
  return 2.0 * double(n) * double(c) * double(k) / double(groups) * double(kernel_volume()) * spatial_work;
}

bool dense_ncdhw(const Tensor& t) { return dense_in_order(t, {0, 1, 2, 3, 4}); }
bool dense_ndhwc(const Tensor& t) { return dense_in_order(t, {0, 2, 3, 4, 1}); }

namespace {
// The strides of a dense 5-D [N, C, D, H, W] array in channels-last memory
// (N, D, H, W, C) or NCDHW order.
Shape strides_5d(const Shape& shape, bool channels_last) {
  if (!channels_last) return contiguous_strides(shape);
  const int64_t c = shape[1], d = shape[2], h = shape[3], w = shape[4];
  return {d * h * w * c, 1, h * w * c, w * c, c};
}
}  // namespace

Tensor empty_5d(const Shape& shape, DType dtype, bool channels_last, Device device) {
  if (!channels_last) return Tensor::empty(shape, dtype, device);
  const Tensor flat = Tensor::empty({shape[0], shape[2], shape[3], shape[4], shape[1]}, dtype, device);
  return Tensor::from_storage(flat.storage(), shape, strides_5d(shape, true), 0, dtype);
}

Tensor dense_5d(const Tensor& t, DType dtype, bool channels_last) {
  if (t.dtype() == dtype && (channels_last ? dense_ndhwc(t) : dense_ncdhw(t))) return t;
  Tensor out = empty_5d(t.shape(), dtype, channels_last, t.device());
  out.copy_from(t);
  return out;
}

Tensor staging_5d(Staged which, const Shape& shape, bool channels_last) {
  std::size_t floats = 1;
  for (const int64_t d : shape) floats *= static_cast<std::size_t>(d);
  if (floats == 0) return empty_5d(shape, DType::f32, channels_last);
  using kernels::cpu::ScratchSlot;
  StoragePtr storage;  // set when the area is too large to keep in the slot
  float* data = kernels::cpu::bounded_scratch(
      which == Staged::input ? ScratchSlot::conv_staged_input : ScratchSlot::conv_staged_output, floats, storage);
  // A view of the slot's memory otherwise: the storage does not own it (the slot lives with the thread).
  if (!storage) storage = std::make_shared<Storage>(data, floats * sizeof(float), Device::cpu(), std::function<void()>{});
  return Tensor::from_storage(std::move(storage), shape, strides_5d(shape, channels_last), 0, DType::f32);
}

Tensor staged_input_5d(const Tensor& t, bool channels_last, kernels::cpu::ConvIsa isa) {
  if (t.dtype() == DType::f32 && (channels_last ? dense_ndhwc(t) : dense_ncdhw(t))) return t;
  Tensor out = staging_5d(Staged::input, t.shape(), channels_last);
  if (channels_last) to_channels_last_f32(t, out, isa);
  else out.copy_from(t);
  return out;
}

namespace {
// Exponent bits all set, on the bit patterns: an OR over integer lanes that
// the compiler vectorises (a float sum of x * 0 was one serial add chain,
// ~4 cycles an element), in blocks so a bad value ends the scan early. The
// 16-bit types go through it too: their own bool-and loop stayed scalar, a
// sixth of a bf16 Winograd call on 64 channels at 56 x 56 (winograd:f4x3
// checks its input on every call), which is why cpu.benchmark, timing the
// kernels without their checks, had picked Winograd over a faster oneDNN.
template <class T, class Bits, Bits kExponent>
bool finite_bits(const T* v, int64_t n) {
  static_assert(sizeof(T) == sizeof(Bits));
  constexpr int64_t kBlock = 4096;
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t end = std::min(n, i0 + kBlock);
    Bits bad = 0;
    for (int64_t i = i0; i < end; ++i) {
      Bits b;
      std::memcpy(&b, v + i, sizeof b);
      bad |= static_cast<Bits>((b & kExponent) == kExponent);
    }
    if (bad) return false;
  }
  return true;
}
template <class T>
bool finite_flat(const T* v, int64_t n) {
  if constexpr (sizeof(T) == 4) return finite_bits<T, uint32_t, 0x7F800000u>(v, n);
  else return finite_bits<T, uint64_t, 0x7FF0000000000000ull>(v, n);
}
}  // namespace

bool all_finite(const Tensor& t) {
  const Tensor d = t.ndim() == 5 && (dense_ncdhw(t) || dense_ndhwc(t)) ? t : t.contiguous();
  // A dense 5-D view's elements fill one stretch starting at its first
  // element, whichever dim order (size-1 dims aside).
  const int64_t n = d.numel();
  switch (d.dtype()) {
    case DType::f32: return finite_flat(static_cast<const float*>(d.data()), n);
    case DType::f64: return finite_flat(static_cast<const double*>(d.data()), n);
    case DType::f16: return finite_bits<uint16_t, uint16_t, uint16_t{0x7C00}>(static_cast<const uint16_t*>(d.data()), n);
    case DType::bf16: return finite_bits<uint16_t, uint16_t, uint16_t{0x7F80}>(static_cast<const uint16_t*>(d.data()), n);
    default: return true;
  }
}

void valid_outputs(const Params& p, int a, int64_t t, int64_t& lo, int64_t& hi) {
  // o*s - pad + t*d in [0, in)  <=>  o in [ceil((pad - t*d) / s), ceil((in + pad - t*d) / s))
  const int64_t s = p.stride[a], shift = p.pad[a] - t * p.dilation[a];
  auto ceil_div = [](int64_t x, int64_t y) { return x >= 0 ? (x + y - 1) / y : -((-x) / y); };
  lo = std::clamp<int64_t>(ceil_div(shift, s), 0, p.outs[a]);
  hi = std::clamp<int64_t>(ceil_div(p.in[a] + shift, s), lo, p.outs[a]);
}

kernels::cpu::ConvShape kernel_shape(const Params& p) {
  kernels::cpu::ConvShape s{p.n, p.c, p.k, p.groups, {}, {}, {}, {}, {}, {}};
  for (int a = 0; a < 3; ++a) {
    s.in[a] = p.in[a], s.kernel[a] = p.kernel[a], s.out[a] = p.outs[a];
    s.stride[a] = p.stride[a], s.pad[a] = p.pad[a], s.dilation[a] = p.dilation[a];
  }
  return s;
}

// Note [Staging by images]
// A staged input and output of a whole batch went through memory: bf16
// MobileNet-V2's 144-channel depthwise layer at 56 x 56, stride 2, took
// 22x its batch-1 time at batch 8 (f32 NCHW 25x), the copies and the
// kernel each streaming 14 MiB where one image's 1.8 fits in cache. With
// image_chunks, a batch whose staged tensors pass kStagedChunkBytes is
// staged, computed and stored back a few images at a time, each chunk
// still shared across the team by the kernel. winograd:f4x3 stages in
// chunks too while the weight's transform is cached (Note [Winograd weight
// cache]: a chunk then only compares the weight): ResNet-50's 64-channel
// 56 x 56 layer at batch 8 ran 1.3-1.5x (bf16 channels-last), 1.45-1.85x
// (bf16 NCHW) and 1.25-1.4x (f32 NCHW) faster in chunks of 2 images, the
// 128-channel 28 x 28 one 1.07-1.25x (one and two threads, interleaved).
constexpr int64_t kStagedChunkBytes = int64_t{4} << 20;

void run_channels_last_f32(const Params& p, kernels::cpu::ConvIsa isa, const ChannelsLastKernel& kernel,
                           bool image_chunks) {
  const Tensor w = contiguous_f32(p.w, isa);
  const Tensor bias = p.has_bias() ? contiguous_f32(p.bias, isa) : Tensor();
  const float* wp = w.data_ptr<float>();
  const float* bp = bias.defined() ? bias.data_ptr<float>() : nullptr;
  const bool in_place = p.out.dtype() == DType::f32 && dense_ndhwc(p.out);
  const bool x_staged = !(p.x.dtype() == DType::f32 && dense_ndhwc(p.x));
  kernels::cpu::ConvShape shape = kernel_shape(p);
  // One chunk of images [i0, i0 + count): x and out are the whole tensors or those images' views.
  auto chunk = [&](const Tensor& x_in, const Tensor& out_in, int64_t count) {
    const Tensor x = staged_input_5d(x_in, true, isa);  // Note [Conv staging]
    Tensor out = in_place ? out_in : staging_5d(Staged::output, out_in.shape(), true);
    shape.n = count;
    kernel(shape, x.data_ptr<float>(), wp, bp, out.data_ptr<float>());
    if (!in_place) store_channels_last_f32(out, out_in, isa);
  };
  const int64_t image_bytes = 4 * (p.c * p.in[0] * p.in[1] * p.in[2] * (x_staged ? 1 : 0) +
                                   p.k * p.outs[0] * p.outs[1] * p.outs[2] * (in_place ? 0 : 1));
  if (!image_chunks || p.n < 2 || image_bytes * p.n <= kStagedChunkBytes) return chunk(p.x, p.out, p.n);
  const int64_t per = std::max<int64_t>(1, kStagedChunkBytes / std::max<int64_t>(1, image_bytes));  // Note [Staging by images]
  for (int64_t i0 = 0; i0 < p.n; i0 += per) {
    const int64_t count = std::min(per, p.n - i0);
    chunk(p.x.slice(0, i0, i0 + count), p.out.slice(0, i0, i0 + count), count);
  }
}

dispatch::Problem problem_of(const Params& p) {
  uint32_t layout = 0;
  if (p.transposed) layout |= kTransposed;
  if (p.channels_last) layout |= kChannelsLast;
  if (p.has_bias()) layout |= kBias;
  if (!dense_ncdhw(p.x) && !dense_ndhwc(p.x)) layout |= kStridedInput;
  auto biggest = [&](const int64_t (&v)[3]) {
    int64_t m = v[3 - p.spatial];
    for (int a = 3 - p.spatial; a < 3; ++a) {
      if (v[a] != m) layout |= kMixedAxes;
      m = std::max(m, v[a]);
    }
    return m;
  };
  const int64_t s = biggest(p.stride), pad = biggest(p.pad), dil = biggest(p.dilation);
  dispatch::Problem prob =
      conv_op().problem(p.device, p.dtype, layout,
                        {p.n, p.groups, p.c, p.k, p.in[0], p.in[1], p.in[2], p.kernel[0], p.kernel[1], p.kernel[2],
                         p.outs[0], p.outs[1], p.outs[2], s, pad, dil});
  prob.flops = p.flops();  // the signature's formula counts forward work; transposed work is per input point
  return prob;
}

}  // namespace bp::ops::conv
