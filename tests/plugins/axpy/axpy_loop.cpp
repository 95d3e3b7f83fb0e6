// builtin:loop: a contiguous f32/f64 loop the compiler vectorises.

#include "backplane/dispatch_checks.h"
#include "params.h"

namespace bp::ops::axpy {
namespace {

bool contiguous(const Params& p, dispatch::Reasons& r) {
  return (p.x.is_contiguous() && p.y.is_contiguous()) || r.fail("contiguous x and y", "a strided view");
}

template <class T>
void loop(const Params& p) {
  const T* x = p.x.data_ptr<T>();
  const T* y = p.y.data_ptr<T>();
  T* out = p.out.data_ptr<T>();
  const T a = static_cast<T>(p.alpha);
  for (int64_t i = 0; i < p.n; ++i) out[i] = a * x[i] + y[i];
}

void run(const Params& p) { p.dtype == DType::f64 ? loop<double>(p) : loop<float>(p); }

}  // namespace

std::unique_ptr<dispatch::Implementation> make_loop() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f32, DType::f64}));
  checks.push_back({"layout", contiguous});
  return std::make_unique<dispatch::Impl<Params>>("builtin:loop", "cpu", dispatch::Properties{}, std::move(checks),
                                                  run);
}

}  // namespace bp::ops::axpy
