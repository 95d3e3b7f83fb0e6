// efficient:cpu against the fp64 oracle (sdpa_test_util.h) where it goes
// beyond flash:cpu — value head size != query head size, masks of any
// broadcastable shape, causal with L <, =, > S, GQA, every dtype,
// non-contiguous views — and its place in the sdpa decision: chosen when
// flash refuses, rejected with its reason when the mem-efficient flag is off.

#include <gtest/gtest.h>

#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "ops/sdpa_test_util.h"

namespace bp::testing {
namespace {

namespace cuda = backends::cuda;

// The oracle reads masks as 4-D: lift a lower-rank mask with leading 1s.
Tensor as4d(const Tensor& m) {
  if (!m.defined() || m.ndim() == 4) return m;
  Shape s(static_cast<std::size_t>(4 - m.ndim()), 1);
  s.insert(s.end(), m.shape().begin(), m.shape().end());
  return m.reshape(s);
}

// Runs efficient:cpu alone and compares with the oracle.
void expect_matches(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal,
                    bool gqa, const std::string& what) {
  const dispatch::ImplementationsGuard only("sdpa", {"efficient:cpu"});
  const Tensor got = sdpa(q, k, v, mask, 0.0, causal, std::nullopt, gqa);
  EXPECT_LE(max_abs_error(got, sdpa_oracle(q, k, v, as4d(mask), causal)), sdpa_tolerance(q.dtype()))
      << what << " " << dtype_name(q.dtype());
}

const DType kDtypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

TEST(SdpaEfficient, ValueHeadSizeDiffers) {
  uint32_t seed = 100;
  for (DType t : kDtypes)
    for (auto [E, Ev] : {std::pair<int64_t, int64_t>{64, 32}, {17, 40}})
      for (int64_t n : {1, 17, 65, 300}) {
        const int64_t S = n == 300 ? 65 : 300 - n;  // pair each query length with another key length
        const Tensor q = random_tensor({1, 2, n, E}, t, seed++), k = random_tensor({1, 2, S, E}, t, seed++);
        const Tensor v = random_tensor({1, 2, S, Ev}, t, seed++);
        expect_matches(q, k, v, Tensor(), false, false, "E=" + std::to_string(E) + " L=" + std::to_string(n));
      }
}

TEST(SdpaEfficient, BroadcastMasksBoolAndFloat) {
  const int64_t B = 2, H = 3, L = 17, S = 65;
  const Shape shapes[] = {{L, 1}, {1, S}, {S}, {H, L, S}, {B, 1, L, S}, {B, H, 1, S}, {1, H, L, 1}};
  uint32_t seed = 200;
  for (DType t : {DType::f32, DType::f16}) {
    const Tensor q = random_tensor({B, H, L, 32}, t, seed++), k = random_tensor({B, H, S, 32}, t, seed++);
    const Tensor v = random_tensor({B, H, S, 24}, t, seed++);
    for (const Shape& s : shapes) {
      expect_matches(q, k, v, random_bool(s, seed++), false, false, "bool mask");
      expect_matches(q, k, v, random_tensor(s, t, seed++), false, false, "float mask");
    }
  }
}

TEST(SdpaEfficient, FullyMaskedRowsAreZero) {
  const Tensor q = random_tensor({1, 1, 4, 8}, DType::f32, 1), k = random_tensor({1, 1, 300, 8}, DType::f32, 2);
  const Tensor v = random_tensor({1, 1, 300, 8}, DType::f32, 3);
  std::vector<uint8_t> keep(4, 1);
  keep[2] = 0;  // row 2 sees no key
  const Tensor mask = Tensor::from_buffer(keep.data(), {4, 1}, DType::boolean);
  expect_matches(q, k, v, mask, false, false, "row masked out");
}

TEST(SdpaEfficient, CausalTopLeftForEveryLengthOrder) {
  uint32_t seed = 300;
  for (DType t : kDtypes)
    for (auto [L, S] : {std::pair<int64_t, int64_t>{17, 300}, {65, 65}, {300, 17}, {1, 65}, {300, 300}}) {
      const Tensor q = random_tensor({1, 2, L, 16}, t, seed++), k = random_tensor({1, 2, S, 16}, t, seed++);
      const Tensor v = random_tensor({1, 2, S, 8}, t, seed++);
      expect_matches(q, k, v, Tensor(), true, false, "causal L=" + std::to_string(L) + " S=" + std::to_string(S));
    }
}

TEST(SdpaEfficient, GroupedQueryAttention) {
  uint32_t seed = 400;
  for (DType t : kDtypes) {
    const Tensor q = random_tensor({2, 8, 65, 32}, t, seed++), k = random_tensor({2, 2, 17, 32}, t, seed++);
    const Tensor v = random_tensor({2, 2, 17, 48}, t, seed++);
    expect_matches(q, k, v, Tensor(), false, true, "gqa");
    expect_matches(q, k, v, random_bool({8, 65, 17}, seed++), false, true, "gqa with a per-head mask");
  }
}

TEST(SdpaEfficient, NonContiguousViews) {
  for (DType t : kDtypes) {
    // (B, L, H, E) storage seen as (B, H, L, E), and a value view sliced out of a wider head.
    const Tensor q = random_tensor({2, 65, 4, 16}, t, 11).transpose(1, 2);
    const Tensor k = random_tensor({2, 300, 4, 16}, t, 12).transpose(1, 2);
    const Tensor v = random_tensor({2, 300, 4, 40}, t, 13).slice(3, 4, 28).transpose(1, 2);
    expect_matches(q, k, v, Tensor(), false, false, "strided");
    expect_matches(q, k, v, random_tensor({65, 300}, t, 14), false, false, "strided, float mask");
  }
}

TEST(SdpaEfficientChoice, ChosenWhenFlashRefusesTheShape) {
  const SdpFlags keep;
  const Tensor q = random_tensor({2, 2, 8, 16}, DType::f32, 1), k = random_tensor({2, 2, 6, 16}, DType::f32, 2);
  const Tensor v = random_tensor({2, 2, 6, 16}, DType::f32, 3);
  // Ev != E.
  dispatch::Decision d = explain_sdpa(q, k, random_tensor({2, 2, 6, 4}, DType::f32, 4));
  EXPECT_EQ(d.chosen->name(), "efficient:cpu");
  EXPECT_NE(reasons(row(d, "flash:cpu")).find("head_dim:"), std::string::npos);
  // A 3-D mask: outside the §4.10.4 shapes flash takes.
  d = explain_sdpa(q, k, v, random_bool({2, 8, 6}, 5));
  EXPECT_EQ(d.chosen->name(), "efficient:cpu");
  EXPECT_NE(reasons(row(d, "flash:cpu")).find("mask_shape:"), std::string::npos);
  // Flash still comes first when it accepts.
  EXPECT_EQ(explain_sdpa(q, k, v).chosen->name(), "flash:cpu");
  // The CPU rows, in order (backplane_cuda's rows, when it loads, sit
  // before math:any and are not available or rejected for CPU tensors).
  std::vector<std::string> names;
  for (const auto& r : d.rows)
    if (r.implementation.find("cuda") == std::string::npos && r.implementation.rfind("cudnn:", 0) != 0)
      names.push_back(r.implementation);
  EXPECT_EQ(names, (std::vector<std::string>{"flash:cpu", "efficient:cpu", "math:any"}));
}

TEST(SdpaEfficientChoice, RejectionsAreNamed) {
  const SdpFlags keep;
  const Tensor q = random_tensor({1, 2, 8, 16}, DType::f32, 1), v4 = random_tensor({1, 2, 8, 4}, DType::f32, 2);
  cuda::set_mem_efficient_sdp_enabled(false);
  dispatch::Decision d = explain_sdpa(q, q, v4);
  EXPECT_EQ(d.chosen->name(), "math:any");
  EXPECT_NE(reasons(row(d, "efficient:cpu"))
                .find("enabled: expected memory-efficient attention enabled "
                      "(backends.cuda.enable_mem_efficient_sdp(True)), got disabled"),
            std::string::npos);
  cuda::set_mem_efficient_sdp_enabled(true);
  d = explain_sdpa(q, q, v4, Tensor(), 0.25);  // dropout stays with math
  EXPECT_EQ(d.chosen->name(), "math:any");
  EXPECT_NE(reasons(row(d, "efficient:cpu")).find("dropout: expected dropout_p == 0, got dropout_p 0.25"),
            std::string::npos);
  d = explain_sdpa(random_tensor({2, 8, 16}, DType::f32, 3), random_tensor({2, 8, 16}, DType::f32, 4),
                   random_tensor({2, 8, 16}, DType::f32, 5));
  EXPECT_NE(reasons(row(d, "efficient:cpu")).find("dims: expected 4-D query, key and value, got query 3-D"),
            std::string::npos);
  // A size-1 head dim with a non-unit stride: flash exempts it, the mem-efficient rule does not.
  const Tensor q1 = random_tensor({1, 2, 8, 2}, DType::f32, 6).slice(3, 0, 2, 2);
  d = explain_sdpa(q1, q1, q1);
  EXPECT_EQ(d.chosen->name(), "flash:cpu");
  EXPECT_NE(reasons(row(d, "efficient:cpu")).find("stride: expected last dimension of query, key and value with "
                                                  "stride 1, got query stride(-1) 2"),
            std::string::npos);
}

}  // namespace
}  // namespace bp::testing
