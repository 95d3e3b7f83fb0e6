// Each sdpa implementation, forced with ImplementationsGuard, against the
// fp64 oracle: mask kinds, causal with L <, =, > S, GQA ratios, head sizes
// and lengths (sampled pairwise with a fixed seed), non-contiguous inputs,
// every dtype.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

// Note [NaN in attention]: NaN and inf go where the oracle (PyTorch's
// softmax) sends them, in every implementation and dtype. math:any and
// efficient:cpu used to drop a NaN from the row maximum and write zeros.
TEST_P(SdpaImpl, NanAndInfPropagateAsTheOracleSays) {
  const Case c = GetParam();
  const dispatch::ImplementationsGuard only("sdpa", {c.impl});
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // (tensor, flat index, value) planted in f64, then converted to the dtype.
  struct Plant {
    const char* name;
    char where;  // q, k, v or m (an additive mask)
    std::vector<int64_t> at;  // flat indices
    double value;
  };
  const int64_t L = 5, S = 7, E = 8;  // row i of the mask is at [i * S, (i + 1) * S)
  const std::vector<Plant> plants = {
      {"NaN in q (row 1)", 'q', {1 * E + 3}, nan},
      {"NaN in k (key 2)", 'k', {2 * E}, nan},
      {"NaN in v (key 4)", 'v', {4 * E + 1}, nan},
      {"+inf in q (row 2)", 'q', {2 * E + 5}, inf},
      {"-inf in k (key 0)", 'k', {0}, -inf},
      {"all-NaN mask row 3", 'm', {3 * S, 3 * S + 1, 3 * S + 2, 3 * S + 3, 3 * S + 4, 3 * S + 5, 3 * S + 6}, nan},
      {"one NaN in a mask row", 'm', {2 * S + 6}, nan},
      {"+inf mask entry", 'm', {1 * S + 3}, inf},
      {"-inf mask row 0", 'm', {0, 1, 2, 3, 4, 5, 6}, -inf},
      {"-inf mask row 4 but one NaN", 'm', {4 * S, 4 * S + 1, 4 * S + 2, 4 * S + 3, 4 * S + 4, 4 * S + 5}, -inf},
  };
  for (const Plant& p : plants) {
    Tensor t[4] = {random_tensor({1, 2, L, E}, DType::f64, 31), random_tensor({1, 2, S, E}, DType::f64, 32),
                   random_tensor({1, 2, S, E}, DType::f64, 33), random_tensor({1, 1, L, S}, DType::f64, 34)};
    const int which = std::string("qkvm").find(p.where);
    for (int64_t i : p.at) t[which].data_ptr<double>()[i] = p.value;
    if (std::string(p.name) == "-inf mask row 4 but one NaN") t[3].data_ptr<double>()[4 * S + 6] = nan;
    for (Tensor& x : t) x = x.to(c.dtype);
    const bool masked = p.where == 'm';
    const Tensor got = sdpa(t[0], t[1], t[2], masked ? t[3] : Tensor());
    std::string why;
    EXPECT_TRUE(same_with_nans(got, sdpa_oracle(t[0], t[1], t[2], masked ? t[3] : Tensor(), false),
                               sdpa_tolerance(c.dtype), why))
        << c.impl << " " << dtype_name(c.dtype) << " " << p.name << ": " << why;
  }
}

// E = 0 with the default scale: 1/sqrt(0) = inf, and the empty scores 0 · inf
// are NaN, so every output is NaN (flash:cpu and efficient:cpu refuse E = 0).
TEST(SdpaNan, EmptyHeadWithTheDefaultScaleIsNan) {
  const dispatch::ImplementationsGuard only("sdpa", {"math:any"});
  for (DType t : {DType::f32, DType::f64}) {
    const Tensor q = Tensor::zeros({1, 1, 3, 0}, t), k = Tensor::zeros({1, 1, 4, 0}, t);
    const Tensor v = random_tensor({1, 1, 4, 5}, t, 41);
    std::string why;
    EXPECT_TRUE(same_with_nans(sdpa(q, k, v), sdpa_oracle(q, k, v, Tensor(), false), 0, why)) << why;
    EXPECT_TRUE(std::isnan(sdpa(q, k, v).to(DType::f64).data_ptr<double>()[0]));
  }
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
