// The shared pieces of the sparse implementations (params.h): the problem
// dispatch sees, the fp32 staging of 16-bit outputs, bias and rounding.

#include "ops/sparse/params.h"

#include "kernels/cpu/convert.h"
#include "backplane/op_spec.h"

namespace bp::ops::sparse {
namespace {

uint32_t x_layout(const Tensor& x) {
  if (x.stride(1) == 1 || x.size(1) == 1) return 0;
  if (x.stride(0) == 1 || x.size(0) == 1) return kXTransposed;
  return kXStrided;
}

double bias_at(const Tensor& bias, int64_t j) {
  return visit_dtype(bias.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    const T v = static_cast<const T*>(bias.data())[j * bias.stride(0)];
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return to_float(v);
    } else if constexpr (std::is_arithmetic_v<T>) {
      return static_cast<double>(v);
    } else {
      return 0.0;  // the front end admits float biases only
    }
  });
}

}  // namespace

dispatch::Problem problem_of(const Params& p) {
  const uint32_t layout = x_layout(p.x) | (p.bias.defined() ? uint32_t(kBias) : 0u) |
                          (p.out_rs == 1 && p.m > 1 ? uint32_t(kOutTransposed) : 0u);
  return sparse_op().problem(p.device, p.dtype, layout, {p.n, p.k, p.m});
}

Staging staging(const Params& p) {
  Staging s;
  if (p.dtype == DType::f32) {
    s.c = static_cast<float*>(p.out.data());
    return s;
  }
  s.storage = allocate_storage(Device::cpu(), static_cast<std::size_t>(p.m * p.n) * sizeof(float));
  s.c = static_cast<float*>(s.storage->data());
  return s;
}

void finish(const Params& p, const Staging& s) {
  if (p.bias.defined())
    for (int64_t j = 0; j < p.n; ++j) {
      const float b = static_cast<float>(bias_at(p.bias, j));
      for (int64_t r = 0; r < p.m; ++r) s.c[r * p.out_rs + j * p.out_cs] += b;
    }
  if (p.dtype == DType::f32) return;
  // staging has out's (contiguous) strides: round it in one pass, with the widest variant this CPU has
  // (round_variant falls back from avx512 to what the hardware supports)
  kernels::cpu::round_variant(p.dtype, kernels::cpu::GemmIsa::avx512)(s.c, static_cast<uint16_t*>(p.out.data()),
                                                                        p.m * p.n);
}

dispatch::Op& sparse_op() {
  static dispatch::Op& op = dispatch_op("sparse");
  return op;
}

}  // namespace bp::ops::sparse
