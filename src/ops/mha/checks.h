#pragma once
// The fast-path conditions of PyTorch (spec §7.1 for nn.MultiheadAttention,
// §7.2 for nn.TransformerEncoderLayer), each a named check in PyTorch's
// order whose reason is PyTorch's own text ("training is enabled").
// Both entries share one list: a condition of one entry passes for the
// other. Conditions that cannot fail in Backplane (NestedTensor inputs,
// autocast, __torch_function__, make_fx tracing, autograd) are left out;
// the device condition is dispatch's own (fastpath:cpu runs on the CPU);
// docs/differences.md says so.

#include <vector>

#include "backplane/dispatch.h"
#include "ops/mha/params.h"

namespace bp::ops::mha::checks {

// fastpath:cpu's list, in PyTorch's order (PyTorch reports the first failure).
std::vector<dispatch::Check<Params>> fastpath_conditions();

// composed:any's: f32/f64, and an activation C++ can run.
std::vector<dispatch::Check<Params>> composed_conditions();

}  // namespace bp::ops::mha::checks
