// cublas:gemm and cublaslt:gemm, added to the matmul op when backplane_cuda
// loads (Note [Registering implementations later] in backplane/dispatch.h).
// They take CUDA tensors of f32, f64, f16 and bf16; their knobs are the
// cuda.matmul flags (read in read_gemm_knobs) and the workspace sizes.

#include <cuda_runtime.h>

#include <string>

#include "backplane/dispatch.h"
#include "backplane/log.h"
#include "cuda_status.h"
#include "gemm_args.h"
#include "ops/matmul/impl_list.h"
#include "ops/matmul/params.h"

namespace bp::cuda_impl {
namespace {

using dispatch::Reasons;
using ops::matmul::Params;

// The innermost 2-D view of a [batch..., rows, cols] tensor.
GemmMatrix matrix_of(const Tensor& t, int64_t batch_stride) {
  const int64_t n = t.ndim();
  return {t.data(), t.size(n - 2), t.size(n - 1), t.stride(n - 2), t.stride(n - 1), batch_stride};
}

// ---------------------------------------------------------------- checks

bool cuda_device(const Params& p, Reasons& r) {
  return p.device.is_cuda() || r.fail("cuda tensors", [&] { return p.device.str(); });
}

bool gemm_dtype_ok(const Params& p, Reasons& r) {
  const bool ok = p.dtype == DType::f32 || p.dtype == DType::f64 || p.dtype == DType::f16 || p.dtype == DType::bf16;
  return ok || r.fail("float16, bfloat16, float32 or float64", [&] { return std::string(dtype_name(p.dtype)); });
}

// Note [Row-major GEMM on column-major BLAS]: each operand needs a unit stride.
bool unit_stride_layout(const Params& p, Reasons& r) {
  const bool ok = as_blas_operand(matrix_of(p.a, 0)) && as_blas_operand(matrix_of(p.b, 0));
  return ok || r.fail("a unit stride in one of the last two dims of each operand", "a view with none");
}

bool deterministic_workspace(const Params& p, Reasons& r) {
  const std::string blocker = cublas_deterministic_blocker();
  if (blocker.empty() || bp::backends::generic::deterministic_algorithms_warn_only()) return true;
  return r.fail("CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8 under use_deterministic_algorithms(True)", blocker);
}

// State (False, False) of allow_{fp16,bf16}_reduced_precision_reduction needs cuBLASLt (spec 4.2).
bool split_k_allowed(const Params& p, Reasons& r) {
  if (p.dtype != DType::f16 && p.dtype != DType::bf16) return true;
  return !read_gemm_knobs(gemm_dtype(p.dtype)).disallow_split_k ||
         r.fail("split-K allowed (the (False, False) reduced-precision state needs cuBLASLt)", "(False, False)");
}

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
  g.dtype = gemm_dtype(p.dtype);
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

std::vector<flags::Id> knob_flags() {
  return {flags::Id::cuda_matmul_fp32_precision, flags::Id::cudnn_fp32_precision, flags::Id::generic_fp32_precision,
          flags::Id::cuda_matmul_allow_fp16_reduced_precision_reduction,
          flags::Id::cuda_matmul_allow_bf16_reduced_precision_reduction,
          flags::Id::cuda_matmul_allow_fp16_accumulation, flags::Id::generic_deterministic_algorithms_warn_only,
          flags::Id::cuda_cublas_workspace_size, flags::Id::cuda_cublaslt_workspace_size};
}

std::unique_ptr<dispatch::Implementation> make(const char* name, const char* backend, bool lt) {
  dispatch::Properties props;
  props.device = DeviceType::cuda;
  props.reduced = dispatch::kTf32 | dispatch::kFp16Accumulation;
  props.workspace = lt ? "the cuBLASLt workspace (cublaslt_workspace_size)" : "the cuBLAS workspace (cublas_workspace_size)";
  // (Checks are built one by one: g++ 12 trips over nested braces here.)
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back({"device", cuda_device});
  checks.push_back({"dtype", gemm_dtype_ok});
  checks.push_back({"layout", unit_stride_layout});
  dispatch::Check<Params> deterministic{"deterministic", deterministic_workspace};
  deterministic.reads = {flags::Id::generic_deterministic_algorithms_warn_only};
  checks.push_back(deterministic);
  if (!lt) {
    dispatch::Check<Params> split_k{"split-k", split_k_allowed};
    split_k.reads = {flags::Id::cuda_matmul_allow_fp16_reduced_precision_reduction,
                     flags::Id::cuda_matmul_allow_bf16_reduced_precision_reduction};
    checks.push_back(split_k);
  }
  return std::make_unique<dispatch::Impl<Params>>(
      name, backend, props, std::move(checks),
      [lt](const Params& p) { run_with(p, lt ? gemm_cublaslt : gemm_cublas); }, knob_flags());
}

// Registered when the library loads: cuBLAS first (PyTorch's default), then
// cuBLASLt; preferred_blas_library("cublaslt") moves cuBLASLt ahead.
const bool registered = [] {
  auto& op = ops::matmul::matmul_op();
#ifdef BP_CUDA_HAVE_CUBLAS
  op.add(make("cublas:gemm", "cublas", false), dispatch::Position::before_reference);
#endif
#ifdef BP_CUDA_HAVE_CUBLASLT
  op.add(make("cublaslt:gemm", "cublaslt", true), dispatch::Position::before_reference);
#endif
  return true;
}();

}  // namespace
}  // namespace bp::cuda_impl
