// ref:any: the reference, for every float dtype and any strides, in double
// (widened and rounded by Tensor's conversions). It accepts every valid
// problem, so it is the list's last entry.

#include "backplane/dispatch_checks.h"
#include "params.h"

namespace bp::ops::axpy {
namespace {

void run(const Params& p) {
  const Tensor x = p.x.to(DType::f64).contiguous(), y = p.y.to(DType::f64).contiguous();
  Tensor out = Tensor::empty(p.out.shape(), DType::f64);
  const double* xs = x.data_ptr<double>();
  const double* ys = y.data_ptr<double>();
  double* os = out.data_ptr<double>();
  for (int64_t i = 0; i < p.n; ++i) os[i] = p.alpha * xs[i] + ys[i];
  Tensor target = p.out;
  target.copy_from(out);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_ref() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", dispatch::Properties{}, std::move(checks), run);
}

}  // namespace bp::ops::axpy
