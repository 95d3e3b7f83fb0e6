#pragma once
// The CUDA rows of linalg (Note [Slots] in backplane/dispatch.h): declared
// here with their SDK-free checks, so explain lists them and their flags are
// known without a GPU; their runs live in backplane_cuda
// (src/cuda/linalg_cusolver.cpp).

#include <memory>
#include <vector>

#include "backplane/dispatch.h"
#include "ops/linalg/params.h"

namespace bp::ops::linalg::cuda_checks {

// cuBLAS's batched LU serves batches of square matrices below this size
// (PyTorch's rule for lu_factor on CUDA); larger ones go to cuSOLVER.
inline constexpr int64_t kBatchedLuMaxN = 512;

// "batched": more than one square matrix, each smaller than kBatchedLuMaxN.
bool batched_small(const Params& p, dispatch::Reasons& r);
// "driver": svd's driver is None or one this row runs.
bool svd_driver(const Params& p, dispatch::Reasons& r);

// cublas:getrf_batched, cusolver:potrf, cusolver:getrf, cusolver:geqrf,
// cusolver:syevd, cusolver:gesvd, in that order.
std::vector<std::unique_ptr<dispatch::Implementation>> cuda_slots();

}  // namespace bp::ops::linalg::cuda_checks
