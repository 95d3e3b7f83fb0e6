// problem_of and the batch-offset helper of the sdpa params (params.h).

#include "ops/sdpa/params.h"

#include "ops/sdpa/impls.h"

namespace bp::ops::sdpa {
dispatch::Problem problem_of(const Params& p) {
  uint32_t layout = 0;
  if (p.mask_kind == MaskKind::boolean) layout |= kBoolMask;
  if (p.mask_kind == MaskKind::additive) layout |= kFloatMask;
  if (p.is_causal) layout |= kCausal;
  if (p.enable_gqa && p.q_in.ndim() >= 3 && p.q_in.size(-3) != p.k_in.size(-3)) layout |= kGqa;
  if (p.dropout_p > 0) layout |= kDropout;
  return sdpa_op().problem(p.device, p.dtype, layout, {p.batch, p.L, p.S, p.E, p.Ev});
}

int64_t batch_offset(const Params& p, const Tensor& t, int64_t index) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(p.ext_shape.size()) - 1; d >= 0; --d) {
    const int64_t n = p.ext_shape[static_cast<std::size_t>(d)];
    off += (index % n) * t.stride(d);
    index /= n;
  }
  return off;
}

DType compute_dtype(DType dtype) { return dtype == DType::f64 ? DType::f64 : DType::f32; }

}  // namespace bp::ops::sdpa
