#pragma once
// The parameters every sdpa implementation receives.
//
// Note [SDPA params]
// The front end (sdpa.cpp) validates the call and reduces it to one batched
// problem over "extended batch" dims: the output's leading dims, with the
// head dim split into (kv heads, group) when grouped-query attention maps
// several query heads onto one key/value head. In that form GQA is plain
// broadcasting: k and v get a stride-0 group dim, q and the output split
// their head dim (h = kv_head * group + j, PyTorch's repeat_interleave), so
// every tensor below is a strided view of [ext..., rows, cols] and nothing
// is copied, except the mask: it is converted once, at its own (unbroadcast)
// size, to an additive mask of compute_dtype() (bool: 0 keep, -inf drop), so
// the kernels read one type. q_in/k_in/v_in/mask_in keep the caller's tensors: the
// PyTorch-compatible checks (4-D, mask shape rule, strides) judge those.
// `out` is a fresh contiguous [ext..., L, Ev] tensor; implementations
// rebuild it on every run and never read it.

#include <cstdint>

#include "backplane/dispatch.h"
#include "backplane/tensor.h"

namespace bp::ops::sdpa {

enum class MaskKind { none, boolean, additive };

struct Params {
  Tensor q_in, k_in, v_in, mask_in;  // as the caller passed them
  Tensor q, k, v, mask, out;          // [ext..., L|S, E|Ev] views (Note [SDPA params])
  Shape ext_shape;                    // extended batch dims
  int64_t batch = 1;                  // product of ext_shape
  int64_t L = 0, S = 0, E = 0, Ev = 0;
  MaskKind mask_kind = MaskKind::none;
  double dropout_p = 0.0, scale = 1.0;
  bool is_causal = false, enable_gqa = false;
  DType dtype = DType::f32;
  Device device = Device::cpu();
};

enum LayoutBits : uint32_t {
  kBoolMask = 1u << 0,
  kFloatMask = 1u << 1,
  kCausal = 1u << 2,
  kGqa = 1u << 3,
  kDropout = 1u << 4,
};
// dims (batch, L, S, E, Ev), dtype, layout bits, flops.
dispatch::Problem problem_of(const Params& p);

// Element offset of extended-batch entry `index` in a view whose leading
// dims are p.ext_shape.
int64_t batch_offset(const Params& p, const Tensor& t, int64_t index);

// The compute dtype of the additive mask and of the kernels' arithmetic:
// f64 for f64 inputs, else f32.
DType compute_dtype(DType dtype);

}  // namespace bp::ops::sdpa
