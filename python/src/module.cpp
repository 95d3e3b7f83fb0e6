// backplane._C: the one extension module. Each bind_*.cpp file binds one
// area; this file only calls them in order.

#include "bindings.h"

NB_MODULE(_C, m) {
  m.doc() = "Backplane native core";
  bp::py::bind_build(m);
  bp::py::bind_errors(m);
  bp::py::bind_flags(m);
  bp::py::bind_tensor(m);
  bp::py::bind_registry(m);
  bp::py::bind_plan_cache(m);
  bp::py::bind_dispatch(m);
  bp::py::bind_ops(m);
  bp::py::bind_attention(m);
  bp::py::bind_opt_einsum(m);
  bp::py::bind_sparse(m);
}
