#pragma once
// matmul, addmm and linear: torch.matmul semantics on bp::Tensor, dispatched
// over every CPU GEMM Backplane has (builtin:avx512_bf16 / avx512 / avx2 /
// generic, openblas:gemm, onednn:matmul, ref:any; docs/dispatch.md).
//
//   bp::Tensor c = bp::matmul(a, b);                 // 1-D and N-D, batch broadcasting
//   bp::Tensor d = bp::addmm(bias, a, b, 0.5, 2.0);  // beta * bias + alpha * a @ b
//   bp::Tensor y = bp::linear(x, weight, bias);      // x @ weight.T + bias
//   std::cout << bp::explain_matmul(a, b).text();    // which implementation, and why
//
// dtypes f32, f64, f16, bf16 (f16/bf16 accumulate in fp32); any strides
// (transposed views reach the BLAS as transposes, not copies). Bad input is
// a clear error naming the op and the values.

#include "backplane/dispatch.h"
#include "backplane/tensor.h"

namespace bp {

Tensor matmul(const Tensor& a, const Tensor& b);
// beta * bias + alpha * (a @ b), a and b 2-D, bias broadcastable to the product.
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta = 1.0, double alpha = 1.0);
// x @ weight.T (+ bias): weight [out, in], bias [out] or undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// The decision tables of the calls above, without running them.
dispatch::Decision explain_matmul(const Tensor& a, const Tensor& b);
dispatch::Decision explain_addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta = 1.0,
                                 double alpha = 1.0);
dispatch::Decision explain_linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace bp
