// math:cuda: the math composition of SDPA (ops/sdpa/math_composition.h) on
// CUDA tensors: the run function of the sdpa op's math:cuda slot (its checks
// live in ops/sdpa/checks_cuda.cpp). Its GEMMs go
// through the matmul op (cublas:gemm or cublaslt:gemm, governed by the
// cuda.matmul knobs, as PyTorch's math path is); the softmax and the dtype
// casts are kernels of sdpa_math_kernels.cu. It accepts every valid CUDA
// problem, so it is the CUDA counterpart of math:any.

#include <stdexcept>
#include <string>

#include "backplane/dispatch.h"
#include "backplane/error.h"
#include "backplane/flags.h"
#include "backplane/runtime.h"
#include "ops/sdpa/checks.h"
#include "ops/sdpa/checks_cuda.h"
#include "fills.h"
#include "ops/sdpa/impls.h"
#include "ops/sdpa/math_composition.h"
#include "gemm_args.h"
#include "sdpa_math_kernels.h"

namespace bp::cuda_impl {
namespace {

using ops::sdpa::Params;
constexpr const char* kName = "math:cuda";

StridedView view_of(const Tensor& t) {
  StridedView v{};
  v.data = const_cast<void*>(t.data());
  v.type = t.dtype();
  v.ndim = static_cast<int>(t.ndim());
  for (int d = 0; d < v.ndim; ++d) v.sizes[d] = t.size(d), v.strides[d] = t.stride(d);
  return v;
}

// The kernels' fixed-size dim arrays bound the views: math:cuda's "dims"
// check (ops/sdpa/checks_cuda.h) keeps problems within them.
static_assert(kMaxViewDims == ops::sdpa::cuda_checks::kMathCudaMaxViewDims);

void cast_into(Tensor& dst, const Tensor& src) {
  try {
    cast_strided(dst.device().index, view_of(dst), view_of(src));
  } catch (const std::runtime_error& e) {
    throw_runtime(kName, std::string(kName) + ": " + e.what());
  }
}

void softmax(const Params& p, Tensor& scores) {
  SoftmaxArgs a{};
  a.scores = scores.data();
  a.f64 = scores.dtype() == DType::f64;
  a.rows = p.batch * p.L, a.L = p.L, a.S = p.S;
  a.scale = p.scale;
  a.causal = p.is_causal;
  if (p.mask.defined()) {
    a.mask = p.mask.data();
    a.mask_rs = p.mask.stride(-2), a.mask_cs = p.mask.stride(-1);
    a.ext_ndim = static_cast<int>(p.ext_shape.size());
    for (int d = 0; d < a.ext_ndim; ++d) a.ext_sizes[d] = p.ext_shape[d], a.mask_ext_strides[d] = p.mask.stride(d);
  }
  a.dropout_p = p.dropout_p;
  if (p.dropout_p > 0) {
    const PhiloxStream stream = default_generator().reserve(static_cast<uint64_t>(p.batch * p.L * p.S));
    a.seed = stream.seed, a.first_block = stream.first_block;
  }
  try {
    softmax_rows(p.device.index, a);
  } catch (const std::runtime_error& e) {
    throw_runtime(kName, std::string(kName) + ": " + e.what());
  }
}

// cuBLAS needs a unit stride in one of a matrix's two dims (Note [Row-major
// GEMM on column-major BLAS]); a view without one (a strided slice of the
// head dim) is copied densely first, so math:cuda takes every layout.
Tensor blas_ready(const Tensor& t) {
  const int64_t n = t.ndim();
  if (t.stride(n - 1) == 1 || t.stride(n - 2) == 1 || t.size(n - 1) == 1) return t;
  Tensor dense = Tensor::empty(t.shape(), t.dtype(), t.device());
  cast_into(dense, t);
  return dense;
}

void run(const Params& p) {
  ops::sdpa::MathSteps steps;
  steps.softmax = softmax;
  steps.cast_into = cast_into;
  Params ready = p;
  ready.q = blas_ready(p.q), ready.k = blas_ready(p.k), ready.v = blas_ready(p.v);
  ops::sdpa::run_math_composition(ready, steps);
}

}  // namespace

void fill_sdpa_math() { dispatch::fill<Params>(ops::sdpa::sdpa_op(), kName, run); }

}  // namespace bp::cuda_impl
