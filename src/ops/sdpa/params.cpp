// problem_of and the batch-offset helper of the sdpa params (params.h).

#include "ops/sdpa/params.h"

namespace bp::ops::sdpa {
namespace {
const char* const kDimNames[] = {"batch", "L", "S", "E", "Ev"};
}

dispatch::Problem problem_of(const Params& p) {
  dispatch::Problem pr;
  pr.device = p.device;
  pr.dtype = p.dtype;
  pr.ndims = 5;
  const int64_t dims[] = {p.batch, p.L, p.S, p.E, p.Ev};
  for (int i = 0; i < 5; ++i) pr.dims[i] = dims[i];
  pr.dim_names = kDimNames;
  uint32_t layout = 0;
  if (p.mask_kind == MaskKind::boolean) layout |= kBoolMask;
  if (p.mask_kind == MaskKind::additive) layout |= kFloatMask;
  if (p.is_causal) layout |= kCausal;
  if (p.enable_gqa && p.q_in.ndim() >= 3 && p.q_in.size(-3) != p.k_in.size(-3)) layout |= kGqa;
  if (p.dropout_p > 0) layout |= kDropout;
  pr.layout = layout;
  pr.flops = 2.0 * static_cast<double>(p.batch) * static_cast<double>(p.L) * static_cast<double>(p.S) *
             static_cast<double>(p.E + p.Ev);
  return pr;
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
