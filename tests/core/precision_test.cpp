// Note [fp32 precision tree]: inheritance, CUDA's missing bf16, and the
// legacy APIs as views that never disagree.

#include <gtest/gtest.h>

#include "backplane/error.h"
#include "backplane/precision.h"

namespace {

using bp::flags::Precision;
using bp::precision::Backend;
using bp::precision::Op;
namespace pr = bp::precision;

// Returns every precision node to its table default (as never set) after each test.
class PrecisionTest : public ::testing::Test {
 protected:
  void TearDown() override {
    using bp::flags::Id;
    for (auto id : {Id::generic_fp32_precision, Id::cudnn_fp32_precision, Id::cudnn_conv_fp32_precision,
                    Id::cudnn_rnn_fp32_precision, Id::cuda_matmul_fp32_precision, Id::mkldnn_fp32_precision,
                    Id::mkldnn_matmul_fp32_precision, Id::mkldnn_conv_fp32_precision, Id::mkldnn_rnn_fp32_precision})
      bp::flags::reset(id);
  }
};

TEST_F(PrecisionTest, DefaultsMatchPyTorch) {
  EXPECT_EQ(pr::resolved(Backend::generic, Op::all), Precision::none);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::tf32);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::rnn), Precision::tf32);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::matmul), Precision::none);
  EXPECT_EQ(pr::resolved(Backend::mkldnn, Op::matmul), Precision::none);
  EXPECT_EQ(pr::get_float32_matmul_precision(), "highest");
  EXPECT_FALSE(pr::cuda_matmul_allow_tf32());
  EXPECT_TRUE(pr::cudnn_allow_tf32());
}

TEST_F(PrecisionTest, LeavesInheritFromTheirBackendThenTheRoot) {
  pr::set(Backend::generic, Op::all, Precision::tf32);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::matmul), Precision::tf32);
  EXPECT_EQ(pr::resolved(Backend::mkldnn, Op::conv), Precision::tf32);
  pr::set(Backend::mkldnn, Op::all, Precision::ieee);
  EXPECT_EQ(pr::resolved(Backend::mkldnn, Op::conv), Precision::ieee);
  pr::set(Backend::mkldnn, Op::conv, Precision::bf16);
  EXPECT_EQ(pr::resolved(Backend::mkldnn, Op::conv), Precision::bf16);
}

TEST_F(PrecisionTest, CudaNeverResolvesToBf16) {
  pr::set(Backend::generic, Op::all, Precision::bf16);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::matmul), Precision::none);
  EXPECT_EQ(pr::resolved(Backend::mkldnn, Op::matmul), Precision::bf16);
  EXPECT_THROW(pr::set(Backend::cuda, Op::matmul, Precision::bf16), bp::Error);
}

TEST_F(PrecisionTest, InvalidPairsAndNamesAreValueErrors) {
  EXPECT_THROW(pr::node(Backend::generic, Op::matmul), bp::Error);
  EXPECT_THROW(pr::parse_backend("rocm"), bp::Error);
  EXPECT_THROW(pr::parse_op("attention"), bp::Error);
}

TEST_F(PrecisionTest, Float32MatmulPrecisionIsAViewOfTheTree) {
  pr::set_float32_matmul_precision("medium");
  EXPECT_EQ(pr::resolved(Backend::mkldnn, Op::matmul), Precision::bf16);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::matmul), Precision::tf32);
  EXPECT_EQ(pr::get_float32_matmul_precision(), "medium");
  pr::set_float32_matmul_precision("high");
  EXPECT_EQ(pr::get_float32_matmul_precision(), "high");
  EXPECT_TRUE(pr::cuda_matmul_allow_tf32());
  pr::set_float32_matmul_precision("highest");
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::matmul), Precision::ieee);
  EXPECT_EQ(pr::get_float32_matmul_precision(), "highest");
  EXPECT_THROW(pr::set_float32_matmul_precision("HIGH"), bp::Error);
  EXPECT_EQ(pr::get_float32_matmul_precision(), "highest");
}

TEST_F(PrecisionTest, MixingOldAndNewApisNeverMakesAReadFail) {
  // In PyTorch this order makes reading matmul.allow_tf32 raise.
  pr::set(Backend::generic, Op::all, Precision::tf32);
  EXPECT_NO_THROW(pr::cuda_matmul_allow_tf32());
  EXPECT_TRUE(pr::cuda_matmul_allow_tf32());
  EXPECT_NO_THROW(pr::get_float32_matmul_precision());
  pr::set_cuda_matmul_allow_tf32(false);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::matmul), Precision::ieee);
}

TEST_F(PrecisionTest, CudnnAllowTf32WritesNoneNotIeee) {
  pr::set_cudnn_allow_tf32(false);
  EXPECT_EQ(static_cast<Precision>(bp::flags::get_raw(bp::flags::Id::cudnn_conv_fp32_precision)), Precision::none);
  EXPECT_FALSE(pr::cudnn_allow_tf32());
  pr::set_cudnn_allow_tf32(true);
  EXPECT_TRUE(pr::cudnn_allow_tf32());
}

// PyTorch 2.15: the cuDNN leaves' "tf32" default applies only while nothing
// above them is set (what PyTorch 2.15.0 reads, side by side).
TEST_F(PrecisionTest, CudnnLeavesTf32DefaultIsOnlyAFallback) {
  pr::set(Backend::generic, Op::all, Precision::ieee);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::ieee);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::rnn), Precision::ieee);
  EXPECT_FALSE(pr::cudnn_allow_tf32());
  pr::set(Backend::generic, Op::all, Precision::bf16);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::none);  // bf16 is no CUDA precision
  pr::set(Backend::generic, Op::all, Precision::none);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::tf32);  // nothing above: the fallback

  pr::set(Backend::cuda, Op::all, Precision::ieee);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::rnn), Precision::ieee);
  pr::set(Backend::cuda, Op::conv, Precision::tf32);  // an explicit leaf wins over its parent
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::tf32);
  pr::set(Backend::cuda, Op::conv, Precision::none);  // an explicit "none" inherits...
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::ieee);
  pr::set(Backend::cuda, Op::all, Precision::none);   // ...and has no fallback
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::none);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::rnn), Precision::tf32);  // never set: still the fallback

  bp::flags::reset(bp::flags::Id::cudnn_conv_fp32_precision);
  EXPECT_EQ(bp::flags::source(bp::flags::Id::cudnn_conv_fp32_precision), bp::flags::Source::Default);
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::tf32);
}

TEST_F(PrecisionTest, AScopedLeafIsExplicit) {
  pr::set(Backend::generic, Op::all, Precision::ieee);
  {
    bp::flags::Scope scope({{bp::flags::Id::cudnn_conv_fp32_precision, static_cast<int64_t>(Precision::tf32)}});
    EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::tf32);
  }
  EXPECT_EQ(pr::resolved(Backend::cuda, Op::conv), Precision::ieee);
}

}  // namespace
