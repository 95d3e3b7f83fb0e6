// The checks of linalg's CUDA rows, SDK-free, so they run without a GPU:
// cuBLAS's batched LU only for batches of small square matrices (PyTorch's
// rule), the SVD driver, the routine each row serves, and the list's order
// (Note [Linalg library preference]).

#include <gtest/gtest.h>

#include "backplane/dispatch.h"
#include "backplane/op_spec.h"
#include "ops/linalg/checks_cuda.h"
#include "ops/linalg/params.h"

namespace bp::ops::linalg {
namespace {

Params problem(Routine r, int64_t batch, int64_t m, int64_t n) {
  Params p;
  p.routine = r, p.batch = batch, p.m = m, p.n = n, p.dtype = DType::f32, p.device = Device::cuda(0);
  return p;
}

TEST(LinalgCudaChecks, BatchedLuOnlyForBatchesOfSmallSquareMatrices) {
  dispatch::Reasons quiet(false), loud(true);
  EXPECT_TRUE(cuda_checks::batched_small(problem(Routine::inv, 8, 16, 16), quiet));
  EXPECT_TRUE(cuda_checks::batched_small(problem(Routine::getrf, 2, 511, 511), quiet));
  EXPECT_FALSE(cuda_checks::batched_small(problem(Routine::inv, 1, 16, 16), quiet));      // one matrix: cuSOLVER
  EXPECT_FALSE(cuda_checks::batched_small(problem(Routine::getrf, 4, 512, 512), quiet));  // large: cuSOLVER
  EXPECT_FALSE(cuda_checks::batched_small(problem(Routine::getrf, 4, 16, 8), loud));      // not square
  ASSERT_EQ(loud.list().size(), 1u);
  EXPECT_EQ(loud.list()[0].got, "batch 4 of 16x8");
}

TEST(LinalgCudaChecks, SvdDriver) {
  dispatch::Reasons quiet(false), loud(true);
  Params p = problem(Routine::svd, 1, 8, 8);
  EXPECT_TRUE(cuda_checks::svd_driver(p, quiet));
  p.driver = "gesvd";
  EXPECT_TRUE(cuda_checks::svd_driver(p, quiet));
  p.driver = "gesvdj";
  EXPECT_FALSE(cuda_checks::svd_driver(p, loud));
  EXPECT_EQ(loud.list().at(0).got, "'gesvdj'");
}

TEST(LinalgCudaChecks, RowsServeTheirRoutinesInPreferenceOrder) {
  ensure_ops();
  std::vector<std::string> cuda_rows;
  for (const dispatch::Implementation* impl : dispatch_op("linalg").implementations())
    if (impl->properties().device == DeviceType::cuda) cuda_rows.push_back(impl->name());
  const std::vector<std::string> want = {"cublas:getrf_batched", "cusolver:potrf", "cusolver:getrf", "cusolver:geqrf",
                                         "cusolver:syevd",       "cusolver:gesvd", "magma:any"};
  EXPECT_EQ(cuda_rows, want);
  const auto* potrf = dispatch_op("linalg").find("cusolver:potrf");
  ASSERT_NE(potrf, nullptr);
  EXPECT_EQ(potrf->check_names(), (std::vector<std::string>{"routine", "dtype"}));
  EXPECT_FALSE(dispatch_op("linalg").find("magma:any")->availability().built);
  EXPECT_EQ(dispatch_op("linalg").config().preferred_library[static_cast<int>(DeviceType::cuda)],
            flags::Id::cuda_preferred_linalg_library);
}

}  // namespace
}  // namespace bp::ops::linalg
