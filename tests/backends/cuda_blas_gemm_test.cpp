// The SDK-free half of the CUDA GEMMs: operand layouts (Note [Row-major GEMM
// on column-major BLAS]), the knobs as they apply, the determinism rule.

#include <gtest/gtest.h>

#include <cstdlib>

#include "backends/cuda/blas_gemm.h"
#include "backplane/flags.h"
#include "backplane/precision.h"

namespace {
using namespace bp::cuda_impl;

GemmMatrix view(int64_t rows, int64_t cols, int64_t rs, int64_t cs) { return {nullptr, rows, cols, rs, cs, 0}; }

TEST(BlasOperand, RowMajorGoesInUntransposedWithItsRowStride) {
  auto op = as_blas_operand(view(4, 3, 5, 1));
  ASSERT_TRUE(op);
  EXPECT_FALSE(op->transpose);
  EXPECT_EQ(op->ld, 5);
}

TEST(BlasOperand, TransposedViewsGoInWithOpT) {
  auto op = as_blas_operand(view(4, 3, 1, 7));
  ASSERT_TRUE(op);
  EXPECT_TRUE(op->transpose);
  EXPECT_EQ(op->ld, 7);
}

TEST(BlasOperand, SingletonDimensionsFreeTheirStride) {
  auto row = as_blas_operand(view(1, 3, 999, 1));
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->transpose);
  EXPECT_EQ(row->ld, 3);
  auto col = as_blas_operand(view(4, 1, 2, 0));
  ASSERT_TRUE(col);
  EXPECT_GE(col->ld, 1);
}

TEST(BlasOperand, NoUnitStrideNeedsACopy) {
  EXPECT_FALSE(as_blas_operand(view(4, 3, 6, 2)));
}

TEST(GemmKnobs, FollowTheFlags) {
  namespace mm = bp::backends::cuda::matmul;
  using bp::flags::ReducedPrecision;
  EXPECT_FALSE(read_gemm_knobs(bp::DType::f32).tf32);
  {
    mm::flags_guard g({.fp32_precision = bp::flags::Precision::tf32});
    EXPECT_TRUE(read_gemm_knobs(bp::DType::f32).tf32);
  }
  {
    mm::flags_guard g({.allow_fp16_reduced_precision_reduction = ReducedPrecision::no_reduced,
                       .allow_fp16_accumulation = true});
    const GemmKnobs k = read_gemm_knobs(bp::DType::f16);
    EXPECT_TRUE(k.disallow_reduced);
    EXPECT_FALSE(k.disallow_split_k);
    EXPECT_TRUE(k.fp16_accumulation);
    EXPECT_FALSE(read_gemm_knobs(bp::DType::bf16).disallow_reduced);
  }
  {
    mm::flags_guard g({.allow_bf16_reduced_precision_reduction = ReducedPrecision::no_reduced_no_splitk});
    EXPECT_TRUE(read_gemm_knobs(bp::DType::bf16).disallow_split_k);
  }
}

TEST(GemmKnobs, DeterminismNeedsTheWorkspaceConfig) {
  EXPECT_EQ(cublas_deterministic_blocker(), "");
  bp::backends::generic::flags_guard g({.deterministic_algorithms = true});
  unsetenv("CUBLAS_WORKSPACE_CONFIG");
  EXPECT_NE(cublas_deterministic_blocker().find("CUBLAS_WORKSPACE_CONFIG=:4096:8"), std::string::npos);
  setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8", 1);
  EXPECT_EQ(cublas_deterministic_blocker(), "");
  setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:2", 1);
  EXPECT_NE(cublas_deterministic_blocker(), "");
  unsetenv("CUBLAS_WORKSPACE_CONFIG");
}

}  // namespace
