#pragma once
// The makers of the sdpa implementations of this folder, listed in order in
// op.cpp. How to add one: write src/ops/sdpa/sdpa_<name>.cpp with a maker
// built from the check blocks (backplane/dispatch_checks.h) and the checks
// of checks.h, and a run over Params (Note [SDPA params] in params.h);
// declare it below, put it in op.cpp's list, and test it forced with
// implementations("sdpa", "<name>"). docs/adding_an_op.md has the recipe.

#include <memory>

#include "backplane/dispatch.h"
#include "backplane/op_spec.h"

namespace bp::ops::sdpa {

std::unique_ptr<dispatch::Implementation> make_flash_cpu();      // sdpa_flash.cpp
std::unique_ptr<dispatch::Implementation> make_efficient_cpu();  // sdpa_efficient.cpp
std::unique_ptr<dispatch::Implementation> make_math();           // sdpa_math.cpp

// The op (after ops::ensure_ops()).
dispatch::Op& sdpa_op();

// The front end (sdpa.cpp): PyTorch's validation, reduced to one call.
Call prepare_sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask, double dropout_p,
                  bool is_causal, std::optional<double> scale, bool enable_gqa);

}  // namespace bp::ops::sdpa
