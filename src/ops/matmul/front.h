#pragma once
// The matmul front end (matmul.cpp): torch.matmul semantics, addmm and
// linear, each validated and reduced to one batched call (Note [Matmul
// params]) for the typed C++ API and the entries of op.cpp alike.

#include "backplane/op_spec.h"

namespace bp::ops::matmul {

Call prepare_matmul(const Tensor& a, const Tensor& b);
Call prepare_addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha);
Call prepare_linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// The dispatch overhead of a warm 1x1x1 problem, for `backplane bench matmul`.
std::vector<std::pair<std::string, double>> dispatch_overhead();

}  // namespace bp::ops::matmul
