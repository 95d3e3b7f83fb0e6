// backplane._C.matmul / addmm / linear on Tensors, with the GIL released
// while they run (the Python package converts other inputs first).

#include <nanobind/stl/optional.h>

#include <optional>

#include "backplane/ops/matmul.h"
#include "bindings.h"

namespace bp::py {

void bind_matmul(nb::module_& m) {
  using namespace nb::literals;
  m.def("matmul", &bp::matmul, "a"_a, "b"_a, nb::call_guard<nb::gil_scoped_release>());
  m.def("addmm", &bp::addmm, "bias"_a, "a"_a, "b"_a, "beta"_a = 1.0, "alpha"_a = 1.0,
        nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& weight, std::optional<Tensor> bias) {
        return bp::linear(x, weight, bias ? *bias : Tensor());
      },
      "x"_a, "weight"_a, "bias"_a = nb::none(), nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace bp::py
