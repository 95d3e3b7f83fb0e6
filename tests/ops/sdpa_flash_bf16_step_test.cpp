// The bf16 softmax block step of flash:cpu (Note [bf16 flash softmax step]
// in attention_flash.cpp) driven block by block as the kernel drives it:
// the lazy one-pass step (stale maximum, weights above 1), its fallback to
// the two-pass step when a maximum grows past the threshold, columns masked
// so far, fully masked, NaN, scores near -3.4e38 (an additive "finfo.min"
// mask), every chunk width and tail, with Oᵀ rescaled inside or by the
// caller. Against softmax(x)·V in fp64 on the same scores.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backplane/dtype.h"
#include "kernels/cpu/attention_flash.h"

namespace bp::kernels::cpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The score of query column r, block b, key c: one behaviour per r % 9.
double score(int r, int b, int c, std::mt19937& rng) {
  std::normal_distribution<double> nd(0.0, 1.0);
  const double z = nd(rng);
  switch (r % 9) {
    case 0: return 2 * z;
    case 1: return z + (b == 2 ? 20.0 : b >= 4 ? 220.0 : 0.0);  // jumps past the lazy threshold (the two-pass
                                                                // redo), the second past fp32's exp range
    case 2: return z + 1.5 * b;                // steady growth: lazy blocks with weights > 1, then a redo
    case 3: return b == 0 ? -kInf : z;         // masked in the first block (m = -inf, two-pass on block 1)
    case 4: return -kInf;                      // never sees a key: output 0
    case 5: return -3.0e38 + z;                // finfo.min mask: every score the same float, uniform weights
    case 6: return (b == 1 && c == 0) ? std::nan("") : z;  // NaN output column
    case 7: return 10 * z;                     // wide spread: weights underflow to 0
    default: return z - 0.5 * b;               // shrinking scores: the maximum never moves after block 0
  }
}

void run(int64_t nq, int64_t nk, int blocks, bool o_inside) {
  const int64_t Ev = 5;
  std::mt19937 rng(static_cast<uint32_t>(nq * 131 + nk * 7 + blocks));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> m(nq, -std::numeric_limits<float>::infinity()), l(nq, 0.0f), corr(nq, 0.0f);
  std::vector<float> ot(Ev * nq, 0.0f);      // Oᵀ
  std::vector<double> all_s, all_v;          // every key's score (per column) and value row
  std::vector<std::vector<float>> scores(nq);
  for (int b = 0; b < blocks; ++b) {
    const int64_t n = b == blocks - 1 && nk > 1 ? nk - 1 : nk;  // a shorter last block
    std::vector<float> s(n * nq), v(n * Ev);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t r = 0; r < nq; ++r) {
        s[c * nq + r] = static_cast<float>(score(static_cast<int>(r), b, static_cast<int>(c), rng));
        scores[r].push_back(s[c * nq + r]);
      }
    for (auto& x : v) x = nd(rng);
    for (auto x : v) all_v.push_back(x);
    const std::vector<float> s_before = s;
    std::vector<uint16_t> p16(n * nq + 1, 0x1234);
    detail::softmax_block_cols_bf16_avx512bf16(s.data(), n, nq, m.data(), l.data(), corr.data(),
                                               o_inside ? ot.data() : nullptr, Ev, p16.data());
    ASSERT_EQ(p16.back(), 0x1234) << "wrote past P";
    for (int64_t i = 0; i < n * nq; ++i)
      ASSERT_TRUE(s[i] == s_before[i] || (s[i] != s[i] && s_before[i] != s_before[i])) << "the scores are read only";
    for (int64_t e = 0; e < Ev; ++e)
      for (int64_t r = 0; r < nq; ++r) {
        double acc = ot[e * nq + r] * (o_inside ? 1.0 : double(corr[r]));
        for (int64_t c = 0; c < n; ++c) acc += double(bfloat16_bits_to_float(p16[c * nq + r])) * v[c * Ev + e];
        ot[e * nq + r] = static_cast<float>(acc);
      }
  }
  const int64_t S = static_cast<int64_t>(scores[0].size());
  for (int64_t r = 0; r < nq; ++r) {
    double mx = -kInf;
    bool nan = false;
    for (double x : scores[r]) nan |= x != x, mx = std::max(mx, x);
    const double inv = l[r] > 0 ? 1.0 / l[r] : (l[r] != l[r] ? l[r] : 0.0);  // inverse_normaliser
    for (int64_t e = 0; e < Ev; ++e) {
      const double got = ot[e * nq + r] * inv;
      if (nan) {
        EXPECT_TRUE(std::isnan(got)) << "column " << r << " nq " << nq << " nk " << nk;
        continue;
      }
      double want = 0, sum = 0;
      if (mx != -kInf)
        for (int64_t j = 0; j < S; ++j) {
          const double w = std::exp(scores[r][j] - mx);
          want += w * all_v[j * Ev + e], sum += w;
        }
      want = mx == -kInf ? 0.0 : want / sum;
      // bf16 weights (2^-9 relative each) on values of size ~1.
      EXPECT_NEAR(got, want, 1e-2) << "column " << r << " (kind " << r % 9 << ") e " << e << " nq " << nq << " nk "
                                   << nk << " blocks " << blocks << " o_inside " << o_inside;
    }
  }
}

TEST(FlashBf16Step, MatchesTheFp64SoftmaxAcrossBlocks) {
  if (!flash_bf16_step_supported()) GTEST_SKIP() << "no AVX512_BF16";
  // Chunks of 4 vectors (64 columns) and the 1-3 vector tails, ragged lanes.
  for (int64_t nq : {1, 9, 16, 17, 40, 63, 64, 65, 120, 130, 192})
    for (int64_t nk : {1, 3, 32})
      for (bool o_inside : {true, false}) run(nq, nk, 6, o_inside);
}

}  // namespace
}  // namespace bp::kernels::cpu
