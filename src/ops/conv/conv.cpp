// The conv front end: torch.nn.functional.conv1d/2d/3d and
// conv_transpose1d/2d/3d, validated in PyTorch's order with its messages'
// content (the argument, the value and what is allowed) and reduced to one
// call (Note [Conv params]); op.cpp declares the op and its entries.

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/tensor_internal.h"
#include "ops/conv/front.h"
#include "ops/conv/impls.h"
#include "ops/conv/params.h"

namespace bp::ops::conv {
namespace {

std::string dims_text(const int64_t* v, int count, const char* sep = " x ") {
  std::string out = "(";
  for (int i = 0; i < count; ++i) out += (i ? sep : "") + std::to_string(v[i]);
  return out + ")";
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

// PyTorch's expand_param_if_needed: an int (a one-element list) stands for
// every spatial axis; otherwise one value per axis.
void expand(const std::string& op, const char* name, const std::vector<int64_t>& v, int spatial, int64_t* dst) {
  if (v.size() == 1) {
    std::fill(dst, dst + spatial, v[0]);
    return;
  }
  if (static_cast<int>(v.size()) != spatial)
    throw_bad_value(op, std::string(name) + "=" + list_text(v),
                    std::string(name) + " to be a single integer value or a list of " + std::to_string(spatial) +
                        " values to match the convolution dimensions");
  std::copy(v.begin(), v.end(), dst);
}

// c10's channels-last stride test (is_channels_last_strides_2d/3d): the
// strides grow in the order C, W, H, (D,) N, size-1 dims aside, and an
// N x C x 1 x 1 tensor is not taken for channels-last.
bool channels_last_strides(const Tensor& t) {
  const int64_t nd = t.ndim();
  if (nd != 4 && nd != 5) return false;
  static constexpr int k4[] = {1, 3, 2, 0};
  static constexpr int k5[] = {1, 4, 3, 2, 0};
  const int* order = nd == 4 ? k4 : k5;
  if (t.stride(1) == 0) return false;
  int64_t min = 0;
  for (int i = 0; i < nd; ++i) {
    const int d = order[i];
    if (t.size(d) == 0 || t.stride(d) < min) return false;
    if (d == 0 && min == t.stride(1)) return false;
    min = t.stride(d);
    if (t.size(d) > 1) min *= t.size(d);
  }
  return true;
}

// A [N, C, L] / [N, C, H, W] / [N, C, D, H, W] view as 5-D (size-1 D and H
// dims inserted; their strides do not matter).
Tensor as_5d(const Tensor& t) {
  if (t.ndim() == 5) return t;
  Shape shape = {t.size(0), t.size(1)}, strides = {t.stride(0), t.stride(1)};
  const int64_t fill = t.stride(2) * t.size(2);
  for (int64_t i = t.ndim(); i < 5; ++i) {
    shape.push_back(1);
    strides.push_back(fill);
  }
  for (int64_t d = 2; d < t.ndim(); ++d) {
    shape.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  return Tensor::from_storage(t.storage(), shape, strides, t.storage_offset(), t.dtype());
}

// Adds a leading batch dim of size 1.
Tensor with_batch(const Tensor& t) {
  Shape shape = t.shape(), strides = t.strides();
  shape.insert(shape.begin(), 1);
  strides.insert(strides.begin(), t.numel() > 0 ? t.stride(0) * t.size(0) : 1);
  return Tensor::from_storage(t.storage(), shape, strides, t.storage_offset(), t.dtype());
}

void check_dtype(const std::string& op, const char* name, const Tensor& t) {
  if (t.dtype() != DType::f16 && t.dtype() != DType::bf16 && t.dtype() != DType::f32 && t.dtype() != DType::f64)
    throw_bad_value(op, std::string(name) + " of dtype " + dtype_name(t.dtype()),
                    "a float16, bfloat16, float32 or float64 " + std::string(name));
}

void check_same(const std::string& op, const char* an, const Tensor& a, const char* bn, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw_bad_value(op, std::string(an) + " " + dtype_name(a.dtype()) + " and " + bn + " " + dtype_name(b.dtype()),
                    std::string(an) + " and " + bn + " of one dtype (PyTorch: \"Input type and " + bn +
                        " type should be the same\")");
  if (a.device() != b.device())
    throw_bad_value(op, std::string(an) + " on " + a.device().str() + " and " + bn + " on " + b.device().str(),
                    std::string(an) + " and " + bn + " on one device");
}

struct Validated {
  Params p;
  bool batched = true;
};

Validated validate(const ConvArgs& a) {
  const std::string op = entry_name(a.spatial, a.transposed);
  const int sp = a.spatial;
  if (!a.input.defined()) throw_bad_value(op, "input None", "an input tensor");
  if (!a.weight.defined()) throw_bad_value(op, "weight None", "a weight tensor");
  check_dtype(op, "input", a.input);
  check_dtype(op, "weight", a.weight);
  check_same(op, "input", a.input, "weight", a.weight);
  if (a.bias.defined()) {
    check_dtype(op, "bias", a.bias);
    check_same(op, "input", a.input, "bias", a.bias);
  }
  const int64_t rank = a.input.ndim();
  if (rank != sp + 1 && rank != sp + 2)
    throw_bad_value(op, "input of size: " + detail::shape_str(a.input.shape()),
                    std::to_string(sp + 1) + "D (unbatched) or " + std::to_string(sp + 2) + "D (batched) input to " + op);
  if (a.weight.ndim() != sp + 2)
    throw_bad_value(op, "weight of size " + detail::shape_str(a.weight.shape()),
                    std::to_string(sp + 2) + "-dimensional weight for " + std::to_string(rank) +
                        "-dimensional input " + detail::shape_str(a.input.shape()));

  Validated v;
  v.batched = rank == sp + 2;
  const Tensor x = v.batched ? a.input : with_batch(a.input);
  const Tensor& w = a.weight;
  Params& p = v.p;
  p.transposed = a.transposed;
  p.spatial = sp;
  p.dtype = x.dtype();
  p.device = x.device();
  p.groups = a.groups;
  const int first = 3 - sp;  // the first used axis of (D, H, W)
  int64_t stride[3], pad[3] = {0, 0, 0}, dilation[3], out_pad[3] = {0, 0, 0};
  expand(op, "stride", a.stride, sp, stride);
  expand(op, "dilation", a.dilation, sp, dilation);
  if (a.padding_mode.empty()) expand(op, "padding", a.padding, sp, pad);
  if (a.transposed) expand(op, "output_padding", a.output_padding, sp, out_pad);
  for (int i = 0; i < sp; ++i) {
    if (stride[i] <= 0)
      throw_bad_value(op, "stride=" + list_text(std::vector<int64_t>(stride, stride + sp)),
                      "positive strides (non-positive stride is not supported)");
    if (pad[i] < 0)
      throw_bad_value(op, "padding=" + list_text(std::vector<int64_t>(pad, pad + sp)),
                      "non-negative padding (negative padding is not supported)");
    if (dilation[i] <= 0)
      throw_bad_value(op, "dilation=" + list_text(std::vector<int64_t>(dilation, dilation + sp)),
                      "dilation greater than zero");
    if (out_pad[i] < 0)
      throw_bad_value(op, "output_padding=" + list_text(std::vector<int64_t>(out_pad, out_pad + sp)),
                      "non-negative output_padding (negative output_padding is not supported)");
  }
  if (a.groups <= 0)
    throw_bad_value(op, "groups=" + std::to_string(a.groups), "a positive groups (non-positive groups is not supported)");
  if (a.transposed)
    for (int i = 0; i < sp; ++i)
      if (out_pad[i] >= stride[i] && out_pad[i] >= dilation[i])
        throw_bad_value(op,
                        "output_padding=" + list_text(std::vector<int64_t>(out_pad, out_pad + sp)) + " with stride=" +
                            list_text(std::vector<int64_t>(stride, stride + sp)) + " and dilation=" +
                            list_text(std::vector<int64_t>(dilation, dilation + sp)),
                        "output padding smaller than either stride or dilation");
  if (a.padding_mode == "same") {
    for (int i = 0; i < sp; ++i)
      if (stride[i] != 1)
        throw_bad_value(op, "padding='same' with stride=" + list_text(std::vector<int64_t>(stride, stride + sp)),
                        "stride 1 (padding='same' is not supported for strided convolutions)");
  }

  // Channels (PyTorch's check_shape_forward).
  const int64_t channels = x.size(1);
  const std::string x_text = "input" + detail::shape_str(x.shape());
  const std::string w_text = "weight of size " + detail::shape_str(w.shape());
  const std::string g_text = "groups=" + std::to_string(a.groups);
  if (!a.transposed) {
    if (w.size(1) * a.groups != channels)
      throw_bad_value(op, x_text + " with " + std::to_string(channels) + " channels",
                      "input to have " + std::to_string(w.size(1) * a.groups) + " channels (" + g_text + ", " +
                          w_text + ")");
    if (w.size(0) % a.groups != 0)
      throw_bad_value(op, w_text, "weight divisible by " + std::to_string(a.groups) + " at dimension 0 (" + g_text + ")");
    p.c = channels;
    p.k = w.size(0);
  } else {
    if (w.size(0) != channels)
      throw_bad_value(op, x_text + " with " + std::to_string(channels) + " channels",
                      "input to have " + std::to_string(w.size(0)) + " channels (transposed, " + w_text + ")");
    if (channels % a.groups != 0)
      throw_bad_value(op, w_text, "weight divisible by " + std::to_string(a.groups) + " at dimension 0 (" + g_text + ")");
    p.c = channels;
    p.k = w.size(1) * a.groups;
  }
  if (a.bias.defined() && (a.bias.ndim() != 1 || a.bias.size(0) != p.k))
    throw_bad_value(op, "bias of size " + detail::shape_str(a.bias.shape()),
                    "bias to be 1-dimensional with " + std::to_string(p.k) + " elements (" + w_text + ")");

  // Spatial sizes.
  p.n = x.size(0);
  int64_t in[3] = {1, 1, 1}, ker[3] = {1, 1, 1}, outs[3] = {1, 1, 1};
  for (int i = 0; i < sp; ++i) {
    in[first + i] = x.size(2 + i);
    ker[first + i] = w.size(2 + i);
  }
  bool empty_input = false;
  for (int i = 0; i < sp; ++i) empty_input = empty_input || in[first + i] == 0;
  if (empty_input)
    throw_bad_value(op, "input of size " + detail::shape_str(a.input.shape()),
                    "input with positive length in every non-batch dimension");
  for (int i = 0; i < 3; ++i) p.stride[i] = p.dilation[i] = 1;
  int64_t pad_lo[3] = {0, 0, 0}, pad_hi[3] = {0, 0, 0};
  for (int i = 0; i < sp; ++i) {
    const int ax = first + i;
    p.stride[ax] = stride[i];
    p.dilation[ax] = dilation[i];
    const int64_t extent = dilation[i] * (ker[ax] - 1) + 1;
    if (a.padding_mode == "same") {
      const int64_t total = extent - 1;
      pad_lo[ax] = total / 2;
      pad_hi[ax] = total - pad_lo[ax];
    } else {
      pad_lo[ax] = pad_hi[ax] = pad[i];
    }
  }
  if (!a.transposed) {
    int64_t padded[3], extents[3];
    bool too_big = false;
    for (int i = 0; i < sp; ++i) {
      const int ax = first + i;
      padded[i] = in[ax] + pad_lo[ax] + pad_hi[ax];
      extents[i] = p.dilation[ax] * (ker[ax] - 1) + 1;
      too_big = too_big || padded[i] < extents[i];
    }
    if (too_big)
      throw_bad_value(op,
                      "padded input size per channel " + dims_text(padded, sp) + " and kernel size " +
                          dims_text(extents, sp),
                      "a kernel size no greater than the padded input size (Kernel size can't be greater than "
                      "actual input size)");
    for (int i = 0; i < sp; ++i) {
      const int ax = first + i;
      outs[ax] = (padded[i] - extents[i]) / p.stride[ax] + 1;
    }
  } else {
    int64_t calc[3];
    bool small = false;
    for (int i = 0; i < sp; ++i) {
      const int ax = first + i;
      calc[i] = (in[ax] - 1) * p.stride[ax] - 2 * pad_lo[ax] + p.dilation[ax] * (ker[ax] - 1) + out_pad[i] + 1;
      outs[ax] = calc[i];
      small = small || calc[i] < 1;
    }
    if (small) {
      int64_t ins[3];
      for (int i = 0; i < sp; ++i) ins[i] = in[first + i];
      throw_bad_value(op,
                      "input size per channel " + dims_text(ins, sp) + " and calculated output size per channel " +
                          dims_text(calc, sp),
                      "an output size of at least 1 per dimension (Output size is too small)");
    }
  }
  std::copy(in, in + 3, p.in);
  std::copy(ker, ker + 3, p.kernel);
  std::copy(outs, outs + 3, p.outs);
  std::copy(pad_lo, pad_lo + 3, p.pad);
  std::copy(pad_hi, pad_hi + 3, p.pad_hi);
  if (a.transposed)
    for (int i = 0; i < sp; ++i) p.pad_hi[first + i] = pad_lo[first + i] - out_pad[i];

  // Memory format: channels-last output when the input or the weight has
  // channels-last strides (PyTorch's CPU rule, mkldnn_conv_use_channels_last).
  p.channels_last = sp >= 2 && (channels_last_strides(x) || channels_last_strides(w));
  p.x = as_5d(x);
  p.w = as_5d(w);
  p.bias = a.bias;
  p.out = empty_5d({p.n, p.k, outs[0], outs[1], outs[2]}, p.dtype, p.channels_last, p.device);
  return v;
}

// The caller's view of out: size-1 spatial dims of conv1d/2d dropped, and
// the batch dim of a batch-less input.
Tensor result_view(const Params& p, bool batched) {
  Shape shape, strides;
  for (int d = 0; d < 5; ++d) {
    if ((d == 0 && !batched) || (d >= 2 && d < 5 - p.spatial)) continue;
    shape.push_back(p.out.size(d));
    strides.push_back(p.out.stride(d));
  }
  return Tensor::from_storage(p.out.storage(), shape, strides, p.out.storage_offset(), p.out.dtype());
}

// out = bias (or zeros) where there is nothing to sum: no input channels.
void fill_without_sum(const Params& p) {
  Tensor ones_shape = Tensor::zeros(p.out.shape(), DType::f64);
  if (p.has_bias() && p.out.numel() > 0) {
    const Tensor b = p.bias.to(DType::f64).contiguous();
    double* dst = ones_shape.data_ptr<double>();
    const int64_t per_channel = p.out_volume();
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t k = 0; k < p.k; ++k)
        std::fill_n(dst + (n * p.k + k) * per_channel, per_channel, b.data_ptr<double>()[k]);
  }
  Tensor out = p.out;
  out.copy_from(ones_shape);
}

}  // namespace

std::string entry_name(int spatial, bool transposed) {
  return std::string(transposed ? "conv_transpose" : "conv") + std::to_string(spatial) + "d";
}

Call prepare_conv(const ConvArgs& args) {
  Validated v = validate(args);
  auto p = std::make_shared<Params>(std::move(v.p));
  Call c;
  c.op = &conv_op();
  c.problem = problem_of(*p);
  c.params = p;
  const bool sums = p->cg() > 0;
  c.compute = p->out.numel() > 0 && sums;
  c.result = [p, batched = v.batched, sums]() -> ArgValue {
    if (!sums && p->out.numel() > 0) fill_without_sum(*p);
    return result_view(*p, batched);
  };
  return c;
}

}  // namespace bp::ops::conv
