#pragma once
// The conv checks that read no flag (problem shapes the kernels take).
// Checks on flags, dtypes and the CPU capability are made with the building
// blocks of backplane/dispatch_checks.h in the implementation files. Each
// adds one reason, "<check>: expected X, got Y", when it fails.

#include "backplane/dispatch.h"
#include "ops/conv/params.h"

namespace bp::ops::conv::checks {

using dispatch::Reasons;

bool forward_only(const Params& p, Reasons& r);  // "transposed": a forward convolution
// "kernel": a 3x3 kernel (2-D), unit stride and dilation (Winograd F(4x4, 3x3)).
bool winograd_3x3(const Params& p, Reasons& r);

}  // namespace bp::ops::conv::checks
