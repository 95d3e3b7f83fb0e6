// The checks of cusparselt:spmma (checks_cuda.h).

#include "ops/sparse/checks_cuda.h"

#include "backplane/dispatch_checks.h"
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
  return list;
}

}  // namespace bp::ops::sparse::cuda_checks
