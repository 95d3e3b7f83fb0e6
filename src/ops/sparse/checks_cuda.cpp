// The checks of cusparselt:spmma (checks_cuda.h).

#include "ops/sparse/checks_cuda.h"

#include <cstdint>

#include "backplane/dispatch_checks.h"
#include "backplane/precision.h"
#include "ops/common/cuda_slot.h"

namespace bp::ops::sparse::cuda_checks {
namespace {

// Sparse tensor cores: compute capability 8.0 and newer.
bool sparse_tensor_cores(const Params& p, dispatch::Reasons& r) {
  const CudaDeviceEnv env = cuda_device_env(p.device);
  return env.sm_major >= 8 || r.fail("a GPU of compute capability 8.0 or newer (sparse tensor cores)", [&] {
           return env.sm_major == 0 ? std::string("an unknown capability")
                                    : "capability " + std::to_string(env.sm_major) + "." + std::to_string(env.sm_minor);
         });
}

bool aligned(const Params& p, dispatch::Reasons& r) {
  const int64_t a = alignment_of(p.dtype);
  return (p.n % a == 0 && p.k % a == 0 && p.m % a == 0) ||
         r.fail("out, in and n multiples of " + std::to_string(a) + " (cuSPARSELt's alignment for " +
                    dtype_name(p.dtype) + ")",
                [&] { return std::to_string(p.n) + ", " + std::to_string(p.k) + ", " + std::to_string(p.m); });
}

// cuSPARSELt has no full-fp32 sparse product: float32 runs on the sparse
// tensor cores in TF32 (CUSPARSE_COMPUTE_32F). It may do so only where the
// fp32 precision of (cuda, matmul) permits TF32, as cublas:gemm does.
bool tf32_permitted(const Params& p, dispatch::Reasons& r) {
  if (p.dtype != DType::f32) return true;
  return precision::resolved(precision::Backend::cuda, precision::Op::matmul) == flags::Precision::tf32 ||
         r.fail("fp32 precision 'tf32' for cuda.matmul (cuSPARSELt multiplies float32 in TF32 only; "
                "allow_tf32 = True or fp32_precision = 'tf32')",
                "another precision (full fp32)");
}

// X is one dense matrix descriptor: one unit stride, the other (the leading
// dimension) a multiple of the alignment, and its first element on cuSPARSELt's
// 16-byte alignment (a view may start anywhere).
bool x_operand(const Params& p, dispatch::Reasons& r) {
  const int64_t a = alignment_of(p.dtype);
  const int64_t s0 = p.x.stride(0), s1 = p.x.stride(1);
  const bool unit = s1 == 1 || s0 == 1;
  const int64_t ld = s1 == 1 ? s0 : s1;
  const bool ok = unit && ld % a == 0 && ld >= (s1 == 1 ? p.k : p.m) &&
                  reinterpret_cast<std::uintptr_t>(p.x.data()) % 16 == 0;
  return ok || r.fail("activations with one unit stride, the other a multiple of " + std::to_string(a) +
                          " elements, starting on 16 bytes",
                      [&] {
                        return "strides (" + std::to_string(s0) + ", " + std::to_string(s1) + "), address % 16 = " +
                               std::to_string(reinterpret_cast<std::uintptr_t>(p.x.data()) % 16);
                      });
}

// An int8 product has an int8 output; cuSPARSELt's bias vector is for
// floating outputs, so int8 takes no bias here.
bool int8_bias(const Params& p, dispatch::Reasons& r) {
  return p.dtype != DType::i8 || !p.bias.defined() || r.fail("no bias with int8 (cuSPARSELt's bias is for floating outputs)", "a bias");
}

}  // namespace

int64_t alignment_of(DType d) {
  switch (d) {
    case DType::i8: return 32;
    case DType::f16:
    case DType::bf16: return 16;
    default: return 8;
  }
}

std::vector<dispatch::Check<Params>> spmma_checks() {
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::i8}));
  list.push_back({"capability", sparse_tensor_cores});
  list.push_back({"alignment", aligned});
  list.push_back({"tf32", tf32_permitted, precision::path(precision::Backend::cuda, precision::Op::matmul)});
  list.push_back({"operand", x_operand});
  list.push_back({"bias", int8_bias});
  return list;
}

std::vector<flags::Id> spmma_run_flags() {
  return {flags::Id::cudnn_benchmark, flags::Id::cudnn_benchmark_limit};
}

}  // namespace bp::ops::sparse::cuda_checks
