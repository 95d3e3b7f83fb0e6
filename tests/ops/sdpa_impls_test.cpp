// Each sdpa implementation, forced with ImplementationsGuard, against the
// fp64 oracle: mask kinds, causal with L <, =, > S, GQA ratios, head sizes
// and lengths (sampled pairwise with a fixed seed), non-contiguous inputs,
// every dtype.

#include <gtest/gtest.h>

#include <random>

#include "backplane/runtime.h"

#include "backplane/dispatch.h"
#include "ops/sdpa_test_util.h"

namespace bp::testing {
namespace {

struct Case {
  std::string impl;
  DType dtype;
};

class SdpaImpl : public ::testing::TestWithParam<Case> {};

enum class MaskCase { none, boolean, additive, broadcast, causal };

// Pairwise-ish sample: every head size meets every length once, across cases.
struct Shape4 {
  int64_t B, Hq, Hkv, L, S, E;
  MaskCase mask;
};
std::vector<Shape4> sample_shapes() {
  const int64_t heads[] = {1, 8, 63, 64, 128};
  const int64_t lens[] = {1, 17, 63, 64, 65, 1000};
  const int64_t ratios[] = {1, 2, 4};
  std::mt19937 gen(7);
  std::vector<Shape4> out;
  int n = 0;
  for (int64_t e : heads)
    for (int64_t l : lens) {
      const int64_t s = lens[gen() % 6];
      const int64_t ratio = ratios[n % 3];
      const int64_t hkv = ratio == 1 ? 2 : 1;
      out.push_back({1 + (n % 4 == 0), ratio * hkv, hkv, l, s, e, static_cast<MaskCase>(n % 5)});
      ++n;
    }
  return out;
}

TEST_P(SdpaImpl, MatchesTheOracle) {
  const Case c = GetParam();
  const dispatch::ImplementationsGuard only("sdpa", {c.impl});
  uint32_t seed = 1;
  for (const Shape4& s : sample_shapes()) {
    if (c.dtype != DType::f32 && s.E > 64) continue;  // keep the run short: f32 covers the big heads
    const Tensor q = random_tensor({s.B, s.Hq, s.L, s.E}, c.dtype, seed++);
    const Tensor k = random_tensor({s.B, s.Hkv, s.S, s.E}, c.dtype, seed++);
    const Tensor v = random_tensor({s.B, s.Hkv, s.S, s.E}, c.dtype, seed++);
    Tensor mask;
    if (s.mask == MaskCase::boolean) mask = random_bool({s.B, s.Hq, s.L, s.S}, seed++);
    if (s.mask == MaskCase::additive) mask = random_tensor({s.B, s.Hq, s.L, s.S}, c.dtype, seed++);
    if (s.mask == MaskCase::broadcast) mask = random_bool({s.L, s.S}, seed++);
    const bool causal = s.mask == MaskCase::causal;
    const Tensor got = sdpa(q, k, v, mask, 0.0, causal, std::nullopt, s.Hq != s.Hkv);
    const Tensor mask4 = s.mask == MaskCase::broadcast ? mask.reshape({1, 1, s.L, s.S}) : mask;
    const auto want = sdpa_oracle(q, k, v, mask4, causal);
    EXPECT_LE(max_abs_error(got, want), sdpa_tolerance(c.dtype))
        << c.impl << " " << dtype_name(c.dtype) << " B=" << s.B << " Hq=" << s.Hq << " Hkv=" << s.Hkv
        << " L=" << s.L << " S=" << s.S << " E=" << s.E << " mask=" << static_cast<int>(s.mask);
  }
}

TEST_P(SdpaImpl, NonContiguousInputs) {
  const Case c = GetParam();
  const dispatch::ImplementationsGuard only("sdpa", {c.impl});
  // (B, L, H, E) storage viewed as (B, H, L, E): the layout attention
  // layers produce; the last dim keeps stride 1, so flash takes it too.
  const Tensor q = random_tensor({2, 33, 4, 16}, c.dtype, 11).transpose(1, 2);
  const Tensor k = random_tensor({2, 40, 4, 16}, c.dtype, 12).transpose(1, 2);
  const Tensor v = random_tensor({2, 40, 4, 24}, c.dtype, 13).slice(3, 0, 24, 1).transpose(1, 2);
  const Tensor vv = c.impl == "flash:cpu" ? v.slice(3, 0, 16) : v;  // flash: equal head dims
  const Tensor got = sdpa(q, k, vv, Tensor(), 0.0, true);
  EXPECT_LE(max_abs_error(got, sdpa_oracle(q, k, vv, Tensor(), true)), sdpa_tolerance(c.dtype));
}

TEST(SdpaLong, ThousandKeysF32) {
  const Tensor q = random_tensor({1, 1, 1000, 64}, DType::f32, 21);
  const Tensor k = random_tensor({1, 1, 1000, 64}, DType::f32, 22);
  const Tensor v = random_tensor({1, 1, 1000, 64}, DType::f32, 23);
  for (const std::string impl : {"flash:cpu", "efficient:cpu", "math:any"}) {
    const dispatch::ImplementationsGuard only("sdpa", {impl});
    for (const bool causal : {false, true}) {
      const Tensor got = sdpa(q, k, v, Tensor(), 0.0, causal);
      EXPECT_LE(max_abs_error(got, sdpa_oracle(q, k, v, Tensor(), causal)), sdpa_tolerance(DType::f32)) << impl;
    }
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* impl : {"flash:cpu", "efficient:cpu", "math:any"})
    for (DType t : {DType::f32, DType::f64, DType::bf16, DType::f16}) out.push_back({impl, t});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, SdpaImpl, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string name = info.param.impl + "_" + dtype_name(info.param.dtype);
  for (char& ch : name)
    if (ch == ':') ch = '_';
  return name;
});

}  // namespace
}  // namespace bp::testing
