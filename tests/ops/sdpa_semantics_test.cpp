// sdpa semantics beyond the oracle sweep: which implementation the knobs
// choose (explain rows), rejection reasons, the two "nothing runs" errors,
// input validation, scale, 3-D inputs, dropout and the fp16/bf16 reduction knob.

#include <gtest/gtest.h>

#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "backplane/runtime.h"
#include "ops/sdpa_test_util.h"

namespace bp::testing {
namespace {

namespace cuda = backends::cuda;

Tensor rnd(const Shape& s, uint32_t seed, DType t = DType::f32) { return random_tensor(s, t, seed); }

TEST(SdpaChoice, FlashFirstThenMath) {
  const SdpFlags keep;
  const Tensor q = rnd({1, 2, 8, 16}, 1), k = rnd({1, 2, 8, 16}, 2), v = rnd({1, 2, 8, 16}, 3);
  EXPECT_EQ(explain_sdpa(q, k, v).chosen->name(), "flash:cpu");
  cuda::set_flash_sdp_enabled(false);
  EXPECT_EQ(explain_sdpa(q, k, v).chosen->name(), "efficient:cpu");
  cuda::set_mem_efficient_sdp_enabled(false);
  const dispatch::Decision d = explain_sdpa(q, k, v);
  EXPECT_EQ(d.chosen->name(), "math:any");
  EXPECT_NE(reasons(row(d, "flash:cpu")).find("enabled: expected flash attention enabled"), std::string::npos);
}

TEST(SdpaChoice, FlashRejectionsAreNamedInPyTorchOrder) {
  const Tensor q = rnd({1, 2, 8, 16}, 1), k = rnd({1, 2, 8, 16}, 2), v = rnd({1, 2, 8, 16}, 3);
  // dropout: flash refuses, math takes it.
  dispatch::Decision d = explain_sdpa(q, k, v, Tensor(), 0.5);
  EXPECT_EQ(d.chosen->name(), "math:any");
  EXPECT_NE(reasons(row(d, "flash:cpu")).find("dropout: expected dropout_p == 0, got dropout_p 0.5"), std::string::npos);
  // 3-D inputs.
  d = explain_sdpa(rnd({2, 8, 16}, 1), rnd({2, 8, 16}, 2), rnd({2, 8, 16}, 3));
  EXPECT_NE(reasons(row(d, "flash:cpu")).find("dims: expected 4-D query, key and value, got query 3-D"),
            std::string::npos);
  // Different value head dim.
  d = explain_sdpa(q, k, rnd({1, 2, 8, 4}, 3));
  EXPECT_NE(reasons(row(d, "flash:cpu")).find("head_dim: expected query, key and value with the same last dimension"),
            std::string::npos);
  // Non-unit last-dim stride.
  d = explain_sdpa(rnd({1, 2, 16, 8}, 1).transpose(2, 3), k, v);
  EXPECT_NE(reasons(row(d, "flash:cpu")).find("stride: expected last dimension of query, key and value with stride 1"),
            std::string::npos);
  // One key/value head broadcast without enable_gqa: math runs it, flash
  // lists every reason.
  d = explain_sdpa(rnd({1, 4, 8, 16}, 1), rnd({1, 1, 8, 16}, 2), rnd({1, 1, 8, 16}, 3), Tensor(), 0.25);
  EXPECT_EQ(d.chosen->name(), "math:any");
  const std::string all = reasons(row(d, "flash:cpu"));
  EXPECT_LT(all.find("dropout:"), all.find("batch_heads: expected query, key and value with the same number of heads"));
}

TEST(SdpaChoice, MaskShapeRule) {
  const Tensor q = rnd({2, 2, 8, 16}, 1), k = rnd({2, 2, 6, 16}, 2), v = rnd({2, 2, 6, 16}, 3);
  EXPECT_EQ(explain_sdpa(q, k, v, random_bool({8, 6}, 4)).chosen->name(), "flash:cpu");
  EXPECT_EQ(explain_sdpa(q, k, v, random_bool({1, 2, 1, 6}, 4)).chosen->name(), "flash:cpu");
  // 3-D: flash refuses it; efficient:cpu takes any broadcastable mask.
  const dispatch::Decision d = explain_sdpa(q, k, v, random_bool({2, 8, 6}, 4));
  EXPECT_EQ(d.chosen->name(), "efficient:cpu");
  EXPECT_NE(reasons(row(d, "flash:cpu")).find("mask_shape: expected attn_mask 2-D"), std::string::npos);
}

TEST(SdpaErrors, BothDisabledIsNoViableBackend) {
  const SdpFlags keep;
  cuda::set_flash_sdp_enabled(false);
  cuda::set_math_sdp_enabled(false);
  const Tensor q = rnd({1, 1, 4, 8}, 1);
  try {
    sdpa(q, q, q);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("No viable backend for scaled_dot_product_attention was found. This is likely "
                                         "due to turning off both the math kernel and the fused kernels."),
              std::string::npos);
  }
}

TEST(SdpaErrors, NothingAcceptableCarriesEveryReason) {
  const SdpFlags keep;
  cuda::set_math_sdp_enabled(false);
  const Tensor q = rnd({2, 4, 8}, 1);  // 3-D: flash refuses
  try {
    sdpa(q, q, q, Tensor(), 0.5);
    FAIL() << "expected NoImplementationError";
  } catch (const dispatch::NoImplementationError& e) {
    const std::string rf = reasons(row(e.decision(), "flash:cpu")), rm = reasons(row(e.decision(), "math:any"));
    EXPECT_NE(rf.find("dropout:"), std::string::npos);
    EXPECT_NE(rf.find("dims:"), std::string::npos);
    EXPECT_NE(rm.find("enabled: expected math attention enabled"), std::string::npos);
  }
}

TEST(SdpaErrors, ValidationNamesTheOpAndTheValue) {
  const Tensor q = rnd({1, 1, 4, 8}, 1);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Value);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { sdpa(q, q.to(DType::f64), q); }).find("query, key and value of the same dtype"),
            std::string::npos);
  EXPECT_NE(message([&] { sdpa(q, rnd({1, 1, 4, 7}, 2), q); }).find("head_dim"), std::string::npos);
  EXPECT_NE(message([&] { sdpa(q, q, q, Tensor(), 1.5); }).find("dropout probability in [0, 1]"), std::string::npos);
  EXPECT_NE(message([&] { sdpa(q, q, q, random_bool({4, 4}, 3), 0.0, true); }).find("either attn_mask or is_causal"),
            std::string::npos);
  EXPECT_NE(message([&] { sdpa(rnd({1, 4, 4, 8}, 1), rnd({1, 3, 4, 8}, 2), rnd({1, 3, 4, 8}, 3), Tensor(), 0.0,
                               false, std::nullopt, true); })
                .find("divides the query's"),
            std::string::npos);
  EXPECT_NE(message([&] { sdpa(q, q, q, random_bool({3, 4}, 3)); }).find("scaled_dot_product_attention"),
            std::string::npos);
  EXPECT_NE(message([&] { sdpa(rnd({4}, 1), q, q); }).find("at least 2 dimensions"), std::string::npos);
}

TEST(SdpaSemantics, CustomScaleAnd3D) {
  const Tensor q = rnd({3, 5, 8}, 1), k = rnd({3, 7, 8}, 2), v = rnd({3, 7, 4}, 3);
  const Tensor got = sdpa(q, k, v, Tensor(), 0.0, false, 0.7);
  const auto want = sdpa_oracle(q.reshape({1, 3, 5, 8}), k.reshape({1, 3, 7, 8}), v.reshape({1, 3, 7, 4}), Tensor(),
                                false, 0.7);
  EXPECT_EQ(got.shape(), (Shape{3, 5, 4}));
  EXPECT_LE(max_abs_error(got, want), 1e-5);
}

TEST(SdpaSemantics, FullyMaskedRowsGiveZeroInEveryImplementation) {
  const Tensor q = rnd({1, 1, 3, 8}, 1), k = rnd({1, 1, 5, 8}, 2);
  std::vector<uint8_t> keep(15, 1);
  for (int j = 0; j < 5; ++j) keep[5 + j] = 0;  // row 1 sees nothing
  const Tensor mask = Tensor::from_buffer(keep.data(), {3, 5}, DType::boolean);
  for (const char* impl : {"flash:cpu", "math:any"}) {
    const dispatch::ImplementationsGuard only("sdpa", {impl});
    const Tensor got = sdpa(q, k, k, mask);
    EXPECT_LE(max_abs_error(got, sdpa_oracle(q, k, k, mask.reshape({1, 1, 3, 5}), false)), 1e-5) << impl;
  }
}

TEST(SdpaSemantics, DropoutFollowsTheGenerator) {
  const Tensor q = rnd({1, 2, 16, 8}, 1), v = rnd({1, 2, 16, 8}, 3);
  manual_seed(5);
  const Tensor a = sdpa(q, q, v, Tensor(), 0.3);
  const Tensor b = sdpa(q, q, v, Tensor(), 0.3);
  manual_seed(5);
  const Tensor c = sdpa(q, q, v, Tensor(), 0.3);
  EXPECT_EQ(max_abs_error(a, std::vector<double>(256, 0.0)) > 0, true);
  const Tensor c64 = c.to(DType::f64).contiguous();
  EXPECT_DOUBLE_EQ(max_abs_error(a, std::vector<double>(c64.data_ptr<double>(), c64.data_ptr<double>() + 256)), 0.0);
  const Tensor b64 = b.to(DType::f64).contiguous();
  EXPECT_GT(max_abs_error(a, std::vector<double>(b64.data_ptr<double>(), b64.data_ptr<double>() + 256)), 0.0);
  // p = 1 drops everything.
  EXPECT_DOUBLE_EQ(max_abs_error(sdpa(q, q, v, Tensor(), 1.0), std::vector<double>(256, 0.0)), 0.0);
}

TEST(SdpaSemantics, ReductionKnobRoundsHalfSteps) {
  const SdpFlags keep;
  const Tensor q = rnd({1, 2, 33, 16}, 1, DType::bf16), k = rnd({1, 2, 40, 16}, 2, DType::bf16),
               v = rnd({1, 2, 40, 16}, 3, DType::bf16);
  const dispatch::ImplementationsGuard only("sdpa", {"math:any"});
  const Tensor exact = sdpa(q, k, v);
  cuda::set_fp16_bf16_reduction_math_sdp_allowed(true);
  const Tensor reduced = sdpa(q, k, v);
  const Tensor e64 = exact.to(DType::f64).contiguous();
  const std::vector<double> ev(e64.data_ptr<double>(), e64.data_ptr<double>() + e64.numel());
  const double diff = max_abs_error(reduced, ev);
  EXPECT_GT(diff, 0.0);   // rounding happened between steps
  EXPECT_LT(diff, 5e-2);  // and only rounding
  EXPECT_LE(max_abs_error(exact, sdpa_oracle(q, k, v, Tensor(), false)), sdpa_tolerance(DType::bf16));
}

}  // namespace
}  // namespace bp::testing
