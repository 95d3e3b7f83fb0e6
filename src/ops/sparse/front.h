#pragma once
// The sparse front end (sparse.cpp): linear and mm with a compressed 2:4
// weight, validated and reduced to one problem (Note [Sparse params]), for
// the typed C++ API and the entries of op.cpp alike.

#include "backplane/op_spec.h"

namespace bp::ops::sparse {

Call prepare_linear(const Tensor& input, const Tensor& values, const Tensor& meta, const Tensor& bias);
Call prepare_mm(const Tensor& values, const Tensor& meta, const Tensor& b);

}  // namespace bp::ops::sparse
