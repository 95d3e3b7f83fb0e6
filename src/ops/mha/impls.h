#pragma once
// The makers of the mha implementations, listed in order in op.cpp.
// How to add one: write src/ops/mha/mha_<name>.cpp with a maker (checks
// from checks.h and backplane/dispatch_checks.h, a run over Params, Note
// [MHA params]), declare it here, put it in op.cpp's list, and test it
// forced with implementations("mha", "<name>") (docs/adding_an_op.md).

#include <memory>

#include "backplane/dispatch.h"
#include "backplane/op_spec.h"

namespace bp::ops::mha {

std::unique_ptr<dispatch::Implementation> make_fastpath();  // mha_fastpath.cpp
std::unique_ptr<dispatch::Implementation> make_composed();  // mha_composed.cpp

OpSpec spec();  // op.cpp

}  // namespace bp::ops::mha
