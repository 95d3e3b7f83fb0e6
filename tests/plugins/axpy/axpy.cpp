// The axpy front end: validates a call (errors name the op, the value and
// what is allowed) and reduces it to Params and a problem for dispatch.

#include <memory>

#include "core/tensor_internal.h"
#include "params.h"

namespace bp::ops::axpy {

dispatch::Op& axpy_op() {
  static dispatch::Op& op = dispatch_op("axpy");
  return op;
}

dispatch::Problem problem_of(const Params& p) {
  const bool dense = p.x.is_contiguous() && p.y.is_contiguous();
  return axpy_op().problem(p.device, p.dtype, dense ? 0u : kStrided, {p.n});
}

Call prepare_axpy(const Tensor& x, const Tensor& y, double alpha) {
  if (!is_floating(x.dtype()) || x.dtype() != y.dtype())
    throw_bad_value("axpy", std::string("x ") + dtype_name(x.dtype()) + " and y " + dtype_name(y.dtype()),
                    "x and y of one float dtype");
  if (x.shape() != y.shape())
    throw_bad_value("axpy", "x " + detail::shape_str(x.shape()) + " and y " + detail::shape_str(y.shape()),
                    "x and y of one shape");
  if (x.device() != y.device())
    throw_bad_value("axpy", "x on " + x.device().str() + " and y on " + y.device().str(), "x and y on one device");
  auto p = std::make_shared<Params>();
  p->x = x, p->y = y, p->alpha = alpha, p->n = x.numel(), p->dtype = x.dtype(), p->device = x.device();
  p->out = Tensor::empty(x.shape(), x.dtype(), x.device());
  Call c;
  c.op = &axpy_op();
  c.problem = problem_of(*p);
  c.params = p;
  c.compute = p->n > 0;
  c.result = [p]() -> ArgValue { return p->out; };
  return c;
}

}  // namespace bp::ops::axpy
