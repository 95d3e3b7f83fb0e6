// backplane._C.scaled_dot_product_attention on Tensors, with the GIL
// released while it runs (backplane.nn.functional converts other inputs
// first).

#include <nanobind/stl/optional.h>

#include <optional>

#include "backplane/ops/sdpa.h"
#include "bindings.h"

namespace bp::py {

void bind_sdpa(nb::module_& m) {
  using namespace nb::literals;
  m.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, std::optional<Tensor> mask, double dropout_p,
         bool is_causal, std::optional<double> scale, bool enable_gqa) {
        return bp::sdpa(q, k, v, mask ? *mask : Tensor(), dropout_p, is_causal, scale, enable_gqa);
      },
      "query"_a, "key"_a, "value"_a, "attn_mask"_a = nb::none(), "dropout_p"_a = 0.0, "is_causal"_a = false,
      "scale"_a = nb::none(), "enable_gqa"_a = false, nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace bp::py
