#pragma once
// The template op "axpy" (docs/adding_an_op.md): out = alpha * x + y.
// Every implementation receives these parameters; the front end (axpy.cpp)
// has validated them and allocated `out` (contiguous, x's shape and dtype).
// Implementations rebuild out on every run and never read it (autotuning
// runs them several times on the same parameters).

#include "backplane/op_spec.h"

namespace bp::ops::axpy {

struct Params {
  Tensor x, y, out;
  double alpha = 1.0;
  int64_t n = 0;  // elements
  DType dtype = DType::f32;
  Device device = Device::cpu();
};

// Layout bits of the problem (part of the autotune key).
enum LayoutBits : uint32_t { kStrided = 1u << 0 };

// The op's declaration (op.cpp), the op, its problem, its front end
// (axpy.cpp) and its makers.
OpSpec spec();
dispatch::Op& axpy_op();
dispatch::Problem problem_of(const Params& p);
Call prepare_axpy(const Tensor& x, const Tensor& y, double alpha);
std::unique_ptr<dispatch::Implementation> make_loop();  // axpy_loop.cpp
std::unique_ptr<dispatch::Implementation> make_ref();   // axpy_ref.cpp

}  // namespace bp::ops::axpy
