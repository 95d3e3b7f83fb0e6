// cublas:gemm and cublaslt:gemm: the run functions of the matmul op's CUDA
// slots (Note [Slots] in backplane/dispatch.h; their checks live in
// src/ops/matmul/checks_cuda.cpp). They take CUDA tensors of f32, f64, f16
// and bf16; their knobs are the cuda.matmul flags (read in
// read_gemm_knobs) and the workspace sizes.

#include <cuda_runtime.h>

#include <string>

#include "backplane/dispatch.h"
#include "backplane/log.h"
#include "cuda_status.h"
#include "gemm_args.h"
#include "fills.h"
#include "ops/matmul/checks_cuda.h"
#include "ops/matmul/impls.h"
#include "ops/matmul/params.h"

namespace bp::cuda_impl {
namespace {

using ops::matmul::Params;

using ops::matmul::cuda_checks::matrix_of;

// ---------------------------------------------------------------- run

void run_with(const Params& p, void (*gemm)(const GemmArgs&)) {
  if (!cublas_deterministic_blocker().empty()) {
    log::warn_once("cublas-deterministic", "use_deterministic_algorithms(True, warn_only=True): " +
                                               cublas_deterministic_blocker() + "; running cuBLAS anyway");
  }
  const int64_t item = static_cast<int64_t>(dtype_itemsize(p.dtype));
  if (p.has_bias()) {
    // out = bias first (broadcast views are densified through the host:
    // gathering on the device would need a kernel), then beta * out + a·b.
    const Tensor dense = p.bias.to(Device::cpu()).to(p.device);
    check_cuda(cudaMemcpy(p.out.data(), dense.data(), static_cast<size_t>(p.out.numel() * item),
                          cudaMemcpyDeviceToDevice),
               "cudaMemcpy");
  }
  GemmArgs g;
  g.dtype = p.dtype;
  g.device = p.device.index;
  g.alpha = p.alpha;
  g.beta = p.has_bias() ? p.beta : 0.0;
  const int64_t batch_dims = static_cast<int64_t>(p.batch_shape.size());
  if (batch_dims <= 1) {
    // One strided-batched call: a batch dim's stride (0 when broadcast) is the batch stride.
    g.batch = p.batch;
    g.a = matrix_of(p.a, batch_dims ? p.a.stride(0) : 0);
    g.b = matrix_of(p.b, batch_dims ? p.b.stride(0) : 0);
    g.c = p.out.data();
    g.c_rs = p.n;
    g.c_batch_stride = p.m * p.n;
    gemm(g);
    return;
  }
  // Several batch dims with arbitrary (broadcast) strides: one call per entry.
  for (int64_t i = 0; i < p.batch; ++i) {
    const auto offset = [&](const Tensor& t) {
      return static_cast<const char*>(t.data()) + ops::matmul::batch_offset(t, p.batch_shape, i) * item;
    };
    g.batch = 1;
    g.a = matrix_of(p.a, 0);
    g.a.data = offset(p.a);
    g.b = matrix_of(p.b, 0);
    g.b.data = offset(p.b);
    g.c = static_cast<char*>(p.out.data()) + i * p.m * p.n * item;
    g.c_rs = p.n;
    g.c_batch_stride = 0;
    gemm(g);
  }
}

}  // namespace

// The matmul op's CUDA slots (src/ops/matmul/op.cpp): cuBLAS and cuBLASLt
// when this library was built with them.
void fill_matmul() {
  dispatch::Op& op = ops::matmul::matmul_op();
#ifdef BP_CUDA_HAVE_CUBLAS
  dispatch::fill<Params>(op, "cublas:gemm", [](const Params& p) { run_with(p, gemm_cublas); });
#endif
#ifdef BP_CUDA_HAVE_CUBLASLT
  dispatch::fill<Params>(op, "cublaslt:gemm", [](const Params& p) { run_with(p, gemm_cublaslt); });
#endif
  (void)op;
}

}  // namespace bp::cuda_impl
