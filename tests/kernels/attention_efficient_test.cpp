// efficient:cpu's kernel (attention_efficient.h) with bf16 and fp32 inputs,
// called directly for every (GEMM variant, 16-bit GEMM variant) pair this
// CPU has, so each way of turning a score row into bf16 weights runs: the
// AVX512_BF16 one-pass step, the AVX-512 exp then vector rounding, the AVX2
// and portable ones. Against a double softmax of the same (already rounded)
// inputs: blocks smaller than the lengths (several query and key blocks,
// tails), causal, a row masked out entirely, a row whose maximum grows
// across key blocks, and few query rows (the transposed score path).

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "backplane/dtype.h"
#include "kernels/cpu/attention_efficient.h"
#include "kernels/cpu/attention_flash.h"
#include "kernels/cpu/bf16_round.h"

namespace bp::kernels::cpu {
namespace {

struct Problem {
  int64_t L, S, E, Ev;
  bool causal;
  std::vector<float> q, k, v, mask;  // the values the kernel sees (bf16-exact for bf16)
};

Problem make(int64_t L, int64_t S, int64_t E, int64_t Ev, bool causal, bool bf16, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](int64_t n) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (float& f : x) f = bf16 ? bfloat16_bits_to_float(bfloat16_bits_from_float(2 * u(gen))) : 2 * u(gen);
    return x;
  };
  Problem p{L, S, E, Ev, causal, fill(L * E), fill(S * E), fill(S * Ev), std::vector<float>(L * S)};
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < S; ++j) {
      float m = 0.5f * u(gen);
      if (i == 1) m = -std::numeric_limits<float>::infinity();  // sees no key at all
      if (i == 2) m = 0.05f * static_cast<float>(j);             // the maximum moves up block after block
      p.mask[i * S + j] = m;
    }
  return p;
}

// out[i] = softmax(q_i · kᵀ · scale + mask_i) · v in double; 0 for a row that sees no key.
std::vector<double> reference(const Problem& p, double scale) {
  std::vector<double> out(static_cast<std::size_t>(p.L * p.Ev), 0.0);
  for (int64_t i = 0; i < p.L; ++i) {
    const int64_t seen = p.causal ? std::min(p.S, i + 1) : p.S;
    std::vector<double> s(static_cast<std::size_t>(seen));
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < seen; ++j) {
      double d = 0;
      for (int64_t e = 0; e < p.E; ++e) d += double(p.q[i * p.E + e]) * p.k[j * p.E + e];
      s[j] = d * scale + p.mask[i * p.S + j];
      mx = std::max(mx, s[j]);
    }
    if (mx == -std::numeric_limits<double>::infinity()) continue;
    double l = 0;
    for (double& x : s) l += (x = std::exp(x - mx));
    for (int64_t j = 0; j < seen; ++j)
      for (int64_t e = 0; e < p.Ev; ++e) out[i * p.Ev + e] += s[j] / l * p.v[j * p.Ev + e];
  }
  return out;
}

std::vector<std::pair<GemmIsa, GemmIsa>> variant_pairs() {
  std::vector<std::pair<GemmIsa, GemmIsa>> out;
  for (GemmIsa isa : {GemmIsa::generic, GemmIsa::avx2, GemmIsa::avx512})
    if (gemm_isa_supported(isa)) out.emplace_back(isa, isa);
  if (gemm_isa_supported(GemmIsa::avx512_bf16)) out.emplace_back(GemmIsa::avx512, GemmIsa::avx512_bf16);
  return out;
}

// Runs the kernel on p with the given variants and blocks; returns the largest error.
double run(const Problem& p, DType dtype, GemmIsa isa, GemmIsa half_isa, int64_t q_block, int64_t kv_block) {
  const bool bf16 = dtype == DType::bf16;
  auto store = [&](const std::vector<float>& x) {
    std::vector<uint16_t> bits(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) bits[i] = bfloat16_bits_from_float(x[i]);
    return bits;
  };
  const std::vector<uint16_t> q16 = store(p.q), k16 = store(p.k), v16 = store(p.v);
  std::vector<float> out32(static_cast<std::size_t>(p.L * p.Ev), std::nanf(""));
  std::vector<uint16_t> out16(out32.size(), 0x7FC1);
  EfficientAttention a;
  a.dtype = dtype;
  a.L = p.L, a.S = p.S, a.E = p.E, a.Ev = p.Ev;
  a.q = {bf16 ? static_cast<const void*>(q16.data()) : p.q.data(), p.E, 1, {0}};
  a.k = {bf16 ? static_cast<const void*>(k16.data()) : p.k.data(), p.E, 1, {0}};
  a.v = {bf16 ? static_cast<const void*>(v16.data()) : p.v.data(), p.Ev, 1, {0}};
  a.mask = {p.mask.data(), p.S, 1, {0}};
  a.out = bf16 ? static_cast<void*>(out16.data()) : out32.data();
  a.out_rs = p.Ev;
  a.out_off = {0};
  a.scale = 1.0 / std::sqrt(double(p.E));
  a.causal = p.causal;
  a.isa = isa, a.half_isa = half_isa;
  a.q_block = q_block, a.kv_block = kv_block;
  efficient_attention(a);
  const std::vector<double> want = reference(p, a.scale);
  double err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double got = bf16 ? bfloat16_bits_to_float(out16[i]) : out32[i];
    err = std::max(err, std::isnan(got) ? std::numeric_limits<double>::infinity() : std::abs(got - want[i]));
  }
  return err;
}

TEST(KernelsEfficientAttention, Bf16WeightsOnEveryVariantMatchTheDoubleSoftmax) {
  for (auto [isa, half_isa] : variant_pairs())
    for (bool causal : {false, true})
      for (auto [L, S, q_block, kv_block] : {std::tuple{97, 130, 40, 48}, std::tuple{5, 300, 384, 64},
                                             std::tuple{70, 70, 64, 33}, std::tuple{700, 650, 384, 256}}) {
        const Problem p = make(L, S, 64, 24, causal, true, static_cast<unsigned>(L * 31 + S));
        // bf16 weights and output on values of size ~1: a few bf16 roundings.
        EXPECT_LE(run(p, DType::bf16, isa, half_isa, q_block, kv_block), 2e-2)
            << gemm_isa_name(isa) << "/" << gemm_isa_name(half_isa) << " causal " << causal << " L " << L << " S " << S;
      }
}

TEST(KernelsEfficientAttention, F32OnEveryVariantMatchesTheDoubleSoftmax) {
  for (auto [isa, half_isa] : variant_pairs())
    for (bool causal : {false, true}) {
      const Problem p = make(97, 130, 40, 24, causal, false, 7);
      EXPECT_LE(run(p, DType::f32, isa, half_isa, 40, 48), 2e-5) << gemm_isa_name(isa) << " causal " << causal;
      // The default blocks, several query blocks: a block's diagonal goes by steps
      // (Note [Efficient causal steps]), the last one ragged (650 keys).
      const Problem big = make(700, 650, 64, 40, causal, false, 9);
      EXPECT_LE(run(big, DType::f32, isa, half_isa, 384, 256), 2e-5) << gemm_isa_name(isa) << " causal " << causal;
    }
}

// The one-pass bf16 weights: each within one bf16 step of the correctly
// rounded exp (the short exp is 7.5e-5 relative, so it may round the other
// way near a tie), the sum within 1e-4 of the exact one, every tail length.
TEST(KernelsEfficientAttention, OnePassBf16WeightsAreTheRoundedExps) {
  if (!flash_bf16_step_supported()) GTEST_SKIP() << "no AVX512_BF16 here";
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(-30.0f, 0.0f);
  for (int64_t n : {1, 15, 16, 17, 31, 32, 33, 100}) {
    std::vector<float> s(static_cast<std::size_t>(n));
    for (float& x : s) x = u(gen);
    s[0] = 4.0f;  // the shift itself: weight 1
    if (n > 3) s[3] = -std::numeric_limits<float>::infinity();
    std::vector<uint16_t> w(static_cast<std::size_t>(n) + 1, 0xBEEF);
    const float sum = detail::exp_shifted_sum_to_bf16_avx512bf16(s.data(), n, 4.0f, w.data());
    double want_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::exp(double(s[i]) - 4.0);
      want_sum += e;
      const float got = bfloat16_bits_to_float(w[i]);
      EXPECT_LE(std::abs(got - e), e * (1.0 / 128)) << "n " << n << " at " << i;
    }
    EXPECT_EQ(w[n], 0xBEEF) << "wrote past n = " << n;
    EXPECT_NEAR(sum, want_sum, 1e-4 * want_sum) << "n " << n;
  }
}

}  // namespace
}  // namespace bp::kernels::cpu
