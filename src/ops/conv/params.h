#pragma once
// The parameters every conv implementation receives.
//
// Note [Conv params]
// The front end (conv.cpp) validates a call of conv1d/2d/3d or
// conv_transpose1d/2d/3d and reduces it to one form: 5-D views
//   x   [N, C, D, H, W]        the input (batch-less inputs get N = 1; conv1d
//                              and conv2d get size-1 D/H dims)
//   w   [K, C/G, KD, KH, KW]   forward weight, or
//       [C, K/G, KD, KH, KW]   transposed weight (PyTorch's layouts)
//   out [N, K, OD, OH, OW]     a fresh tensor, NCDHW-contiguous, or
//                              channels-last dense when `channels_last`
// with stride, dilation and padding per axis (D, H, W). Forward:
//   out[n, k, o] = bias[k] + sum_{c in k's group, t} x[n, c, o*s - pad + t*d] * w[k, c', t]
// and the transposed form is its adjoint (each x[n, c, i] adds
// w[c, k', t] * x into out[n, k, i*s - pad + t*d]). Padding may be
// asymmetric only for forward padding="same" with an even extent: `pad` is
// the front (low) padding and the back padding (`pad_hi`) follows from the
// output size; most implementations read only `pad` and the output size. x and w keep
// the caller's strides (any strides, channels-last or not); implementations
// take what they can and make dense copies of the rest. Implementations
// rebuild `out` on every run and never read it (autotuning runs them
// several times on the same params).

#include <cstdint>

#include "backplane/dispatch.h"
#include "backplane/tensor.h"
#include "kernels/cpu/conv_direct.h"

namespace bp::ops::conv {

// Depthwise problems whose input and output are NCDHW and whose output rows
// are at least this wide run on the direct kernels' planes (vectors along
// W, no transposition: 1.5-5x faster than transposing at 56-112 wide);
// narrow rows would leave most lanes empty, so they, like everything else,
// run on channels-last fp32 (conv_direct.cpp). The default order's NCHW
// depthwise rule reads it too (Note [Conv default order] in order.h).
inline constexpr int64_t kPlanarMinWidth = 32;

struct Params {
  Tensor x, w, bias, out;  // 5-D views (Note [Conv params]); bias [K] or undefined
  bool transposed = false;
  int spatial = 2;               // 1, 2 or 3: conv1d / conv2d / conv3d
  int64_t n = 1, c = 1, k = 1, groups = 1;
  int64_t in[3] = {1, 1, 1};     // x's D, H, W
  int64_t kernel[3] = {1, 1, 1};
  int64_t outs[3] = {1, 1, 1};   // out's D, H, W
  int64_t stride[3] = {1, 1, 1};
  int64_t pad[3] = {0, 0, 0};    // front (low) padding per axis
  // Back padding: forward, the user's (out = (in + pad + pad_hi - extent) / stride + 1);
  // transposed, pad - output_padding (out = (in - 1) * stride + extent - pad - pad_hi),
  // oneDNN's padding_r in both cases.
  int64_t pad_hi[3] = {0, 0, 0};
  int64_t dilation[3] = {1, 1, 1};
  bool channels_last = false;    // out's memory format (PyTorch's rule: input or weight channels-last)
  DType dtype = DType::f32;
  Device device = Device::cpu();

  int64_t cg() const { return c / groups; }  // input channels per group
  int64_t kg() const { return k / groups; }  // output channels per group
  int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t in_volume() const { return in[0] * in[1] * in[2]; }
  int64_t out_volume() const { return outs[0] * outs[1] * outs[2]; }
  bool has_bias() const { return bias.defined(); }
  // Depthwise: one input channel per group (groups == C), any multiplier K / C.
  bool depthwise() const { return groups > 1 && groups == c; }
  bool unit_stride() const { return stride[0] == 1 && stride[1] == 1 && stride[2] == 1; }
  bool unit_dilation() const { return dilation[0] == 1 && dilation[1] == 1 && dilation[2] == 1; }
  // 2*N*C*K/G*kernel volume*(output volume, forward; input volume, transposed).
  double flops() const;
};

// The problem dispatch sees (the op's shape signature, op.cpp): batch,
// groups, c_in, c_out, d, h, w, kd, kh, kw, od, oh, ow, and the largest
// stride, padding and dilation over the axes (kMixedAxes says they differ).
enum LayoutBits : uint32_t {
  kTransposed = 1u << 0,
  kChannelsLast = 1u << 1,  // out (and the suggested input format) channels-last
  kBias = 1u << 2,
  kStridedInput = 1u << 3,  // x neither NCDHW-contiguous nor channels-last dense
  kMixedAxes = 1u << 4,     // stride, padding or dilation differ between axes
};
dispatch::Problem problem_of(const Params& p);

// Whether a 5-D view is dense in NCDHW order, or in channels-last order
// (N, D, H, W, C with C fastest). Size-1 dims may carry any stride.
bool dense_ncdhw(const Tensor& t);
bool dense_ndhwc(const Tensor& t);

// An uninitialised 5-D tensor of `shape` ([N, C, D, H, W]) in channels-last
// memory (strides of a dense N, D, H, W, C array) or NCDHW-contiguous.
Tensor empty_5d(const Shape& shape, DType dtype, bool channels_last, Device device = Device::cpu());
// t itself when it already has `dtype` and that dense layout, else a copy that does.
Tensor dense_5d(const Tensor& t, DType dtype, bool channels_last);

// Note [Conv staging]
// The fp32 copies an implementation makes of an input that is not dense
// fp32 in its kernel's layout (bf16, f16, strided), and the fp32 output it
// rounds into a bf16 / f16 / strided result, live in two kernel scratch
// slots of the calling thread (Note [Kernel scratch], bounded_scratch: up
// to 64 MiB each, larger ones allocated per call): fresh blocks of up to
// 38 MiB (bf16 MobileNet-V2 layers at batch 8) were mapped and faulted in
// page by page on every call, as long as the depthwise kernel itself took.
// A staged tensor is valid until the thread stages into the same slot again
// (kernels do not nest).
enum class Staged { input, output };
// An uninitialised fp32 5-D tensor of `shape`, laid out as empty_5d's.
Tensor staging_5d(Staged which, const Shape& shape, bool channels_last);
// dense_5d(t, f32, channels_last), a copy staged as the input (converted
// by the vector kernels of the staging implementation's isa: layout.h).
Tensor staged_input_5d(const Tensor& t, bool channels_last, kernels::cpu::ConvIsa isa);

// Whether every element of t is finite (no NaN, no infinity). Dense views
// are scanned as flat arrays; other views are converted first.
bool all_finite(const Tensor& t);

// Output coordinate range [lo, hi) of axis `a` whose input index
// o*stride - pad + t*dilation lies in [0, in) for kernel tap t (forward form).
void valid_outputs(const Params& p, int a, int64_t t, int64_t& lo, int64_t& hi);

}  // namespace bp::ops::conv
