// The flash-attention kernel (kernels/cpu/attention_flash.h) called directly:
// the AVX-512 and AVX2 exp against std::exp, and the tile edges of the
// query/key blocks (one short of, at and one past each block boundary,
// causal and masked, fully masked rows) on every softmax path (AVX-512,
// AVX2, portable) against an fp64 oracle.

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backplane/dtype.h"
#include "backplane/runtime.h"
#include "kernels/cpu/attention_flash.h"

namespace bp::kernels::cpu {
namespace {

// The vector pieces of each width, and whether this CPU runs them.
struct VectorPieces {
  const char* name;
  bool supported;
  void (*exp)(const float*, float*, int64_t);
  void (*widen)(const uint16_t*, int64_t, int64_t, int64_t, float*);
  float flush_below;  // exp gives exactly 0 below this (AVX2: no subnormal results)
};
std::vector<VectorPieces> vector_pieces() {
  return {{"avx512", flash_softmax_avx512_supported(), detail::exp_f32_avx512, detail::widen_f16_rows_avx512,
           -std::numeric_limits<float>::infinity()},
          {"avx2", softmax_vec_for(GemmIsa::avx2) == SoftmaxVec::avx2, detail::exp_f32_avx2,
           detail::widen_f16_rows_avx2, -86.9f}};
}

TEST(FlashKernel, F16cWideningMatchesTheScalarConversion) {
  int ran = 0;
  for (const VectorPieces& vp : vector_pieces()) {
    if (!vp.supported) continue;
    ++ran;
    // Every width up to two vectors and a bit (the tail), rows with a
    // stride wider than the row, values over the whole f16 range.
    std::mt19937 gen(7);
    for (int64_t cols = 1; cols <= 35; ++cols) {
      const int64_t rows = 3, rs = cols + 5;
      std::vector<uint16_t> src(static_cast<std::size_t>(rows * rs));
      for (auto& h : src) h = static_cast<uint16_t>(gen() & 0x7BFFu) | static_cast<uint16_t>(gen() & 0x8000u);
      std::vector<float> got(static_cast<std::size_t>(rows * cols + 1), -7.0f);
      vp.widen(src.data(), rs, rows, cols, got.data());
      EXPECT_EQ(got.back(), -7.0f) << vp.name << " wrote past the end, cols " << cols;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          ASSERT_EQ(got[r * cols + c], half_bits_to_float(src[r * rs + c])) << vp.name << " r " << r << " c " << c;
    }
  }
  if (ran == 0) GTEST_SKIP() << "neither AVX-512 nor AVX2 with F16C";
}

TEST(FlashKernel, VectorExpMatchesStdExp) {
  int ran = 0;
  for (const VectorPieces& vp : vector_pieces()) {
    if (!vp.supported) continue;
    ++ran;
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> x = {-inf, -1e30f, -1e5f, -200.0f, -104.5f, -104.0f, -103.9f, -103.0f, -100.0f, -87.5f,
                            -87.3f, -86.95f, -86.9f, -86.85f, -80.0f, -1e-30f, -0.0f, 0.0f, 1e-30f, 1e-7f, 88.0f,
                            88.7f, 88.72f, 88.7228f, 88.723f, 88.8f, 89.0f, 100.0f, inf};
    for (float t = -110.0f; t <= 89.0f; t += 0.0137f) x.push_back(t);  // dense, both sides of every 2^n
    for (float t = -1.0f; t <= 1.0f; t += 1.0f / 1024) x.push_back(t);
    x.push_back(std::numeric_limits<float>::quiet_NaN());
    std::vector<float> y(x.size() + 1, -1.0f);  // odd length: the tail runs too
    vp.exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(y.back(), -1.0f) << vp.name << " wrote past the end";
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double ref = std::exp(static_cast<double>(x[i]));
      const float got = y[i];
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(got)) << vp.name;
      } else if (ref > FLT_MAX) {
        EXPECT_EQ(got, inf) << vp.name << " x = " << x[i];
      } else if (x[i] < vp.flush_below) {
        EXPECT_EQ(got, 0.0f) << vp.name << " x = " << x[i];
      } else {
        // ~2 ulp in the normal range; one subnormal step below it.
        EXPECT_LE(std::abs(got - ref), 2.5e-7 * ref + 2e-45)
            << vp.name << " x = " << x[i] << " std::exp " << std::exp(x[i]);
      }
    }
    float zero = 0.0f, one;
    vp.exp(&zero, &one, 1);
    EXPECT_EQ(one, 1.0f) << vp.name;
    const float ninf = -inf;
    float e;
    vp.exp(&ninf, &e, 1);
    EXPECT_EQ(e, 0.0f) << vp.name;
  }
  if (ran == 0) GTEST_SKIP() << "neither AVX-512 nor AVX2";
}

TEST(FlashKernel, RowMaxAndExpShiftedSumAgreeOnEveryWidth) {
  // The per-row pieces of efficient:cpu and math:any: every length around a
  // vector (tails), -inf entries, a NaN anywhere, a NaN or -inf start.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 gen(11);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  std::vector<SoftmaxVec> widths = {SoftmaxVec::scalar};
  if (softmax_vec_for(GemmIsa::avx2) == SoftmaxVec::avx2) widths.push_back(SoftmaxVec::avx2);
  if (flash_softmax_avx512_supported()) widths.push_back(SoftmaxVec::avx512);
  // Up to past two 32-wide unrolled steps of the AVX-512 loops and their tail.
  for (int64_t n = 0; n <= 70; ++n)
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<float> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = nd(gen);
      if (variant == 1 && n > 0) x[static_cast<std::size_t>(n / 2)] = -inf;
      if (variant == 2 && n > 0) x[static_cast<std::size_t>(n - 1)] = nan;
      if (variant == 3 && n > 0) x[static_cast<std::size_t>(n / 3)] = nan;  // first half of a 32-wide step
      for (float init : {-inf, 0.5f, nan}) {
        double want_max = init;
        bool want_nan = init != init;
        for (float v : x) want_nan |= v != v, want_max = v > want_max ? v : want_max;
        for (SoftmaxVec w : widths) {
          const float got = row_max(x.data(), n, init, w);
          if (want_nan) EXPECT_TRUE(got != got) << "n " << n << " width " << int(w);
          else EXPECT_EQ(got, static_cast<float>(want_max)) << "n " << n << " width " << int(w);
        }
      }
      if (variant >= 2) continue;  // NaN rows never reach the exp: their maximum is NaN
      const float shift = n > 0 ? row_max(x.data(), n, -inf, SoftmaxVec::scalar) : 0.0f;
      if (shift == -inf) continue;  // every key masked: callers never take the exp then
      double want_sum = 0;
      for (float v : x) want_sum += std::exp(double(v) - shift);
      for (SoftmaxVec w : widths) {
        std::vector<float> y = x;
        y.push_back(-7.0f);  // past the end: untouched
        const float sum = exp_shifted_sum(y.data(), n, shift, w);
        EXPECT_NEAR(sum, want_sum, 1e-5 * want_sum + 1e-30) << "n " << n << " width " << int(w);
        EXPECT_EQ(y.back(), -7.0f);
        for (int64_t i = 0; i < n; ++i)
          // x - shift is rounded to float first (|x - shift| < 20 here: 20 ulps of the argument)
          EXPECT_NEAR(y[i], std::exp(double(x[i]) - shift), 2e-6 * std::exp(double(x[i]) - shift) + 1e-37);
      }
    }
}

// q (L x E), k (S x E), v (S x Ev), mask (L x S) or empty, row-major, one head.
std::vector<double> oracle(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                           const std::vector<float>& mask, int64_t L, int64_t S, int64_t E, int64_t Ev,
                           double scale, bool causal) {
  std::vector<double> out(L * Ev, 0.0), w(S);
  for (int64_t i = 0; i < L; ++i) {
    double mx = -INFINITY;
    for (int64_t j = 0; j < S; ++j) {
      double s = 0;
      for (int64_t e = 0; e < E; ++e) s += double(q[i * E + e]) * k[j * E + e];
      s *= scale;
      if (!mask.empty()) s += mask[i * S + j];
      if (causal && j > i) s = -INFINITY;
      w[j] = s, mx = std::max(mx, s);
    }
    if (mx == -INFINITY) continue;
    double sum = 0;
    for (int64_t j = 0; j < S; ++j) sum += (w[j] = std::exp(w[j] - mx));
    for (int64_t j = 0; j < S; ++j)
      for (int64_t e = 0; e < Ev; ++e) out[i * Ev + e] += w[j] / sum * v[j * Ev + e];
  }
  return out;
}

// The largest |out - oracle| over batch entry b of a dense [batch, L, Ev]
// output, whose element i (counted from the batch's start) `at` reads as a
// double; q, k, v are the dense [batch, L|S, E|Ev] inputs, scale 0.3.
template <class At>
double batch_error(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                   const std::vector<float>& mask, int64_t b, int64_t L, int64_t S, int64_t E, int64_t Ev,
                   bool causal, At at) {
  const std::vector<float> qb(q.begin() + b * L * E, q.begin() + (b + 1) * L * E);
  const std::vector<float> kb(k.begin() + b * S * E, k.begin() + (b + 1) * S * E);
  const std::vector<float> vb(v.begin() + b * S * Ev, v.begin() + (b + 1) * S * Ev);
  const std::vector<double> ref = oracle(qb, kb, vb, mask, L, S, E, Ev, 0.3, causal);
  double err = 0;
  for (int64_t i = 0; i < L * Ev; ++i) err = std::max(err, std::abs(at(b * L * Ev + i) - ref[i]));
  return err;
}

void check_shape(int64_t L, int64_t S, int64_t qb, int64_t kb, bool causal, bool masked, GemmIsa isa) {
  const int64_t E = 24, Ev = 40, batch = 2;
  std::mt19937 rng(static_cast<uint32_t>(L * 1000 + S));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto fill = [&](int64_t n) {
    std::vector<float> t(n);
    for (auto& x : t) x = nd(rng);
    return t;
  };
  const std::vector<float> q = fill(batch * L * E), k = fill(batch * S * E), v = fill(batch * S * Ev);
  std::vector<float> mask;
  if (masked) {
    mask = fill(L * S);
    for (int64_t j = 0; j < S; ++j) mask[0 * S + j] = -INFINITY;  // row 0 fully masked
    if (L > 2)
      for (int64_t j = 0; j < S; ++j)
        if (j != S - 1) mask[2 * S + j] = -INFINITY;  // row 2 sees only the last key
  }
  std::vector<float> out(batch * L * Ev, 123.0f);
  FlashAttention a;
  a.elem = DType::f32;
  a.batch = batch, a.L = L, a.S = S, a.E = E, a.Ev = Ev;
  a.q.data = q.data(), a.k.data = k.data(), a.v.data = v.data(), a.out = out.data();
  a.q.rs = E, a.k.rs = E, a.v.rs = Ev, a.out_rs = Ev;
  if (masked) a.mask.data = mask.data(), a.mask.rs = S, a.mask.cs = 1;
  for (int64_t b = 0; b < batch; ++b) {
    a.q.off.push_back(b * L * E), a.k.off.push_back(b * S * E), a.v.off.push_back(b * S * Ev);
    a.out_off.push_back(b * L * Ev), a.mask.off.push_back(0);
  }
  a.scale = 0.3, a.causal = causal, a.isa = isa, a.q_block = qb, a.kv_block = kb;
  flash_attention(a);
  for (int64_t b = 0; b < batch; ++b) {
    const double err = batch_error(q, k, v, mask, b, L, S, E, Ev, causal, [&](int64_t i) { return double(out[i]); });
    EXPECT_LT(err, 2e-5) << "L=" << L << " S=" << S << " blocks " << qb << "x" << kb << " causal=" << causal
                         << " masked=" << masked << " isa=" << gemm_isa_name(isa) << " batch " << b;
  }
}

TEST(FlashKernel, TileEdges) {
  std::vector<GemmIsa> isas = {GemmIsa::generic};
  if (flash_softmax_avx512_supported()) isas.push_back(GemmIsa::avx512);
  if (softmax_vec_for(GemmIsa::avx2) == SoftmaxVec::avx2) isas.push_back(GemmIsa::avx2);
  for (GemmIsa isa : isas) {
    // The default 192 x 384 tile: one short of, at and past each edge.
    for (int64_t L : {1, 3, 191, 192, 193, 385})
      for (int64_t S : {1, 383, 384, 385, 769})
        for (bool causal : {false, true})
          for (bool masked : {false, true}) check_shape(L, S, 192, 384, causal, masked, isa);
    // Small and odd tiles: many blocks per row, tails narrower than a vector.
    for (int64_t L : {17, 65})
      for (int64_t S : {15, 64, 70})
        for (bool causal : {false, true}) check_shape(L, S, 16, 8, causal, true, isa), check_shape(L, S, 7, 33, causal, false, isa);
  }
}

// Note [Lazy fp32 softmax step]: a block's weights are taken against the
// stale maximum until some score passes it by more than 8 ln 2; the step
// then stops at that key row, scales the weights it wrote and goes on
// against the new maximum. Rows whose scores jump in the middle of a key
// block (just past the bound, and by 12), jump by 1e4 after a padding-like
// mask of -1e4 (exp would overflow against the stale maximum), climb a
// little with every key (each block within the bound, the blocks together
// far past it), or drop far below it, on many small key blocks, against
// the fp64 oracle on every softmax path.
TEST(FlashKernel, LazyStepAcrossScoreJumps) {
  std::vector<GemmIsa> isas = {GemmIsa::generic};
  if (flash_softmax_avx512_supported()) isas.push_back(GemmIsa::avx512);
  if (softmax_vec_for(GemmIsa::avx2) == SoftmaxVec::avx2) isas.push_back(GemmIsa::avx2);
  const int64_t L = 70, S = 150, E = 24, Ev = 40;
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto fill = [&](int64_t n) {
    std::vector<float> t(static_cast<std::size_t>(n));
    for (auto& x : t) x = nd(rng);
    return t;
  };
  const std::vector<float> q = fill(L * E), k = fill(S * E), v = fill(S * Ev);
  std::vector<float> mask = fill(L * S);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < S; ++j) {
      float& m = mask[i * S + j];
      switch (i % 5) {
        case 1: m += j >= 37 + i % 11 ? 5.6f + 0.2f * static_cast<float>(i % 3) : 0.0f; break;
        case 2: m = j < std::min(33 + i % 9, i) ? -1e4f : m; break;  // every row, causal too, sees an unmasked key
        case 3: m += 0.3f * static_cast<float>(j); break;
        case 4: m += j >= 50 ? 12.0f : j >= 20 ? -30.0f : 0.0f; break;
        default: break;
      }
    }
  for (GemmIsa isa : isas)
    for (bool causal : {false, true})
      for (int64_t kb : {16, 40, 384}) {
        std::vector<float> out(static_cast<std::size_t>(L * Ev), 123.0f);
        FlashAttention a;
        a.elem = DType::f32;
        a.L = L, a.S = S, a.E = E, a.Ev = Ev;
        a.q.data = q.data(), a.k.data = k.data(), a.v.data = v.data(), a.out = out.data();
        a.q.rs = E, a.k.rs = E, a.v.rs = Ev, a.out_rs = Ev;
        a.q.off = a.k.off = a.v.off = a.out_off = a.mask.off = {0};
        a.mask.data = mask.data(), a.mask.rs = S, a.mask.cs = 1;
        a.scale = 0.3, a.causal = causal, a.isa = isa, a.q_block = 32, a.kv_block = kb;
        flash_attention(a);
        const double err =
            batch_error(q, k, v, mask, 0, L, S, E, Ev, causal, [&](int64_t i) { return double(out[i]); });
        EXPECT_LT(err, 2e-5) << "isa=" << gemm_isa_name(isa) << " causal=" << causal << " kv_block=" << kb;
      }
}

// n normal values as 16-bit bits (bf16, or f16) in `bits`, and the floats
// those bits hold (what the fp64 oracle then reads).
std::vector<float> random_16bit(std::mt19937& rng, std::normal_distribution<float>& nd, bool bf16, int64_t n,
                                std::vector<uint16_t>& bits) {
  std::vector<float> t(static_cast<std::size_t>(n));
  bits.resize(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    bits[i] = bf16 ? bfloat16_bits_from_double(nd(rng)) : half_bits_from_double(nd(rng));
    t[i] = bf16 ? bfloat16_bits_to_float(bits[i]) : half_bits_to_float(bits[i]);
  }
  return t;
}

// bf16 and f16 in and out on the AVX-512 block step (Note [AVX-512 flash
// block step]: P rounded to bf16 in the softmax, Oᵀ rescaled there, the
// transposed vector output) and on the portable step, at the edges of the
// default 192 x 384 tile, causal or masked, one row fully masked and a NaN
// in one key (every output row that sees it is NaN, the rest finite). The oracle runs on the 16-bit-rounded inputs in fp64.
void check_half(DType elem, int64_t L, int64_t S, bool causal, bool masked, bool nan_key, GemmIsa isa) {
  const int64_t E = 40, Ev = 40;  // E == Ev (flash:cpu's check); 40: a 16-lane tail
  std::mt19937 rng(static_cast<uint32_t>(L * 7919 + S));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const bool bf16 = elem == DType::bf16;
  const auto to16 = [&](double x) { return bf16 ? bfloat16_bits_from_double(x) : half_bits_from_double(x); };
  const auto from16 = [&](uint16_t h) { return bf16 ? bfloat16_bits_to_float(h) : half_bits_to_float(h); };
  auto fill = [&](int64_t n, std::vector<uint16_t>& bits) { return random_16bit(rng, nd, bf16, n, bits); };
  std::vector<uint16_t> qh, kh, vh;
  const std::vector<float> q = fill(L * E, qh), v = fill(S * Ev, vh);
  std::vector<float> k = fill(S * E, kh);
  const int64_t bad = S / 2;  // the NaN key
  if (nan_key) kh[bad * E + 3] = to16(NAN), k[bad * E + 3] = NAN;
  std::vector<float> mask;
  if (masked) {
    mask.assign(static_cast<std::size_t>(L * S), 0.0f);
    for (int64_t i = 0; i < L * S; ++i) mask[i] = nd(rng);
    for (int64_t j = 0; j < S; ++j) mask[j] = -INFINITY;  // row 0 sees nothing
  }
  std::vector<uint16_t> out(static_cast<std::size_t>(L * Ev + 1), 0x1234);
  FlashAttention a;
  a.elem = elem;
  a.L = L, a.S = S, a.E = E, a.Ev = Ev;
  a.q.data = qh.data(), a.k.data = kh.data(), a.v.data = vh.data(), a.out = out.data();
  a.q.rs = E, a.k.rs = E, a.v.rs = Ev, a.out_rs = Ev;
  a.q.off = a.k.off = a.v.off = a.out_off = {0};
  if (masked) a.mask.data = mask.data(), a.mask.rs = S, a.mask.cs = 1, a.mask.off = {0};
  a.scale = 0.3, a.causal = causal, a.isa = isa;
  flash_attention(a);
  ASSERT_EQ(out.back(), 0x1234) << "wrote past the output";
  // The oracle without the NaN key (rows that never see it) ...
  std::vector<float> kc = k;
  if (nan_key) kc[bad * E + 3] = 0.0f;
  const std::vector<double> ref = oracle(q, kc, v, mask, L, S, E, Ev, 0.3, causal);
  double err = 0;
  for (int64_t i = 0; i < L; ++i) {
    // ... and the rows that see it (not causally hidden) are NaN: a -inf
    // mask entry does not hide a NaN score (NaN + -inf is NaN, as in PyTorch).
    const bool sees_nan = nan_key && (!causal || i >= bad);
    for (int64_t e = 0; e < Ev; ++e) {
      const float got = from16(out[i * Ev + e]);
      if (sees_nan) {
        ASSERT_TRUE(std::isnan(got)) << "row " << i << " L=" << L << " S=" << S;
      } else {
        ASSERT_FALSE(std::isnan(got)) << "row " << i << " L=" << L << " S=" << S;
        err = std::max(err, std::abs(got - ref[i * Ev + e]));
      }
    }
  }
  // bf16 P (8 bits) and a bf16 output: ~2^-8 relative on outputs of size ~1.
  EXPECT_LT(err, bf16 ? 2.5e-2 : 4e-3) << dtype_name(elem) << " L=" << L << " S=" << S << " causal=" << causal
                                       << " masked=" << masked << " isa=" << gemm_isa_name(isa);
}

TEST(FlashKernel, HalfTypesAtTileEdges) {
  std::vector<GemmIsa> isas = {GemmIsa::generic};
  if (flash_softmax_avx512_supported()) isas.push_back(GemmIsa::avx512);
  if (gemm_isa_supported(GemmIsa::avx512_bf16) && flash_softmax_avx512_supported()) isas.push_back(GemmIsa::avx512_bf16);
  for (GemmIsa isa : isas)
    for (DType elem : {DType::bf16, DType::f16}) {
      if (elem == DType::f16 && isa == GemmIsa::avx512_bf16) continue;  // pick_gemm_isa gives it bf16 only
      for (int64_t L : {1, 8, 191, 193})
        for (int64_t S : {1, 383, 385, 769})
          for (bool causal : {false, true}) {
            check_half(elem, L, S, causal, false, false, isa);
            check_half(elem, L, S, causal, true, S > 2, isa);
          }
    }
}

// Note [Packed key and value panels]: bf16 with several batch entries (a
// thread's packed panels must follow its entry), the value head transposed
// in memory (Vᵀ packed from a column-major view), small odd tiles (several
// query blocks per entry, odd key blocks, the causal diagonal block shorter
// than the packed one), one and two threads, against the fp64 oracle on the
// bf16 inputs.
void check_bf16_batch(int64_t L, int64_t S, int64_t qb, int64_t kb, bool causal, GemmIsa isa) {
  const int64_t E = 24, Ev = 40, batch = 3;
  std::mt19937 rng(static_cast<uint32_t>(L * 31 + S));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto fill = [&](int64_t n, std::vector<uint16_t>& bits) { return random_16bit(rng, nd, true, n, bits); };
  std::vector<uint16_t> qh, kh, vh;
  const std::vector<float> q = fill(batch * L * E, qh), k = fill(batch * S * E, kh), v = fill(batch * S * Ev, vh);
  // V stored per entry as Ev x S (column-major S x Ev view).
  std::vector<uint16_t> vt(vh.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < S; ++j)
      for (int64_t e = 0; e < Ev; ++e) vt[b * S * Ev + e * S + j] = vh[b * S * Ev + j * Ev + e];
  std::vector<uint16_t> out(static_cast<std::size_t>(batch * L * Ev), 0x1234);
  FlashAttention a;
  a.elem = DType::bf16;
  a.batch = batch, a.L = L, a.S = S, a.E = E, a.Ev = Ev;
  a.q.data = qh.data(), a.k.data = kh.data(), a.v.data = vt.data(), a.out = out.data();
  a.q.rs = E, a.k.rs = E, a.v.rs = 1, a.v.cs = S, a.out_rs = Ev;
  for (int64_t b = 0; b < batch; ++b) {
    a.q.off.push_back(b * L * E), a.k.off.push_back(b * S * E), a.v.off.push_back(b * S * Ev);
    a.out_off.push_back(b * L * Ev);
  }
  a.scale = 0.3, a.causal = causal, a.isa = isa, a.q_block = qb, a.kv_block = kb;
  flash_attention(a);
  for (int64_t b = 0; b < batch; ++b) {
    const double err = batch_error(q, k, v, {}, b, L, S, E, Ev, causal,
                                   [&](int64_t i) { return double(bfloat16_bits_to_float(out[i])); });
    EXPECT_LT(err, 2.5e-2) << "L=" << L << " S=" << S << " blocks " << qb << "x" << kb << " causal=" << causal
                           << " isa=" << gemm_isa_name(isa) << " batch " << b;
  }
}

TEST(FlashKernel, Bf16PackedPanelsAcrossEntriesAndThreads) {
  std::vector<GemmIsa> isas = {GemmIsa::generic};
  if (flash_softmax_avx512_supported()) isas.push_back(GemmIsa::avx512);
  if (gemm_isa_supported(GemmIsa::avx512_bf16) && flash_softmax_avx512_supported()) isas.push_back(GemmIsa::avx512_bf16);
  const int saved = bp::get_num_threads();
  for (int threads : {1, 2}) {
    bp::set_num_threads(threads);
    for (GemmIsa isa : isas)
      for (bool causal : {false, true}) {
        check_bf16_batch(400, 500, 64, 96, causal, isa);   // many query blocks, 6 key blocks (last one short)
        check_bf16_batch(193, 385, 192, 384, causal, isa);  // the default tile's edges
        check_bf16_batch(130, 77, 48, 33, causal, isa);     // odd key blocks (an odd k for Vᵀ·P)
      }
  }
  bp::set_num_threads(saved);
}

// Note [Causal staircase]: the causal diagonal key block of bf16 tasks runs
// per group of query columns over the keys the group sees (scores, mask,
// fill, softmax step and a value product over a prefix of the packed value
// panel). Tiles whose query blocks are not multiples of the group (100: 64 +
// 36 columns), key blocks shorter than the query blocks (groups that see
// none of a block), longer ones, odd lengths, L != S (S > L cuts the last
// block short: V read in place), an additive mask with a fully masked row
// and a NaN key, against the fp64 oracle on the bf16 inputs.
void check_bf16_staircase(int64_t L, int64_t S, int64_t qb, int64_t kb, bool masked, bool nan_key) {
  const int64_t E = 32, Ev = 48;
  std::mt19937 rng(static_cast<uint32_t>(L * 131 + S * 7 + qb + kb));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto fill = [&](int64_t n, std::vector<uint16_t>& bits) { return random_16bit(rng, nd, true, n, bits); };
  std::vector<uint16_t> qh, kh, vh;
  const std::vector<float> q = fill(L * E, qh), v = fill(S * Ev, vh);
  std::vector<float> k = fill(S * E, kh);
  const int64_t bad = std::min(S - 1, L / 2 + 1);  // the NaN key: hidden from the rows before it
  if (nan_key) kh[bad * E + 5] = bfloat16_bits_from_double(NAN), k[bad * E + 5] = NAN;
  std::vector<float> mask;
  if (masked) {
    mask.resize(static_cast<std::size_t>(L * S));
    for (auto& x : mask) x = 2.0f * nd(rng);
    for (int64_t j = 0; j < S; ++j) mask[std::min<int64_t>(L - 1, 70) * S + j] = -INFINITY;  // a row that sees nothing
  }
  std::vector<uint16_t> out(static_cast<std::size_t>(L * Ev + 1), 0x1234);
  FlashAttention a;
  a.elem = DType::bf16;
  a.L = L, a.S = S, a.E = E, a.Ev = Ev;
  a.q.data = qh.data(), a.k.data = kh.data(), a.v.data = vh.data(), a.out = out.data();
  a.q.rs = E, a.k.rs = E, a.v.rs = Ev, a.out_rs = Ev;
  a.q.off = a.k.off = a.v.off = a.out_off = {0};
  if (masked) a.mask.data = mask.data(), a.mask.rs = S, a.mask.cs = 1, a.mask.off = {0};
  a.scale = 0.3, a.causal = true, a.isa = GemmIsa::avx512_bf16, a.q_block = qb, a.kv_block = kb;
  flash_attention(a);
  ASSERT_EQ(out.back(), 0x1234) << "wrote past the output";
  std::vector<float> kc = k;
  if (nan_key) kc[bad * E + 5] = 0.0f;
  const std::vector<double> ref = oracle(q, kc, v, mask, L, S, E, Ev, 0.3, true);
  const std::string what = "L=" + std::to_string(L) + " S=" + std::to_string(S) + " blocks " + std::to_string(qb) +
                           "x" + std::to_string(kb) + (masked ? " masked" : "") + (nan_key ? " NaN key" : "");
  double err = 0;
  for (int64_t i = 0; i < L; ++i)
    for (int64_t e = 0; e < Ev; ++e) {
      const float got = bfloat16_bits_to_float(out[i * Ev + e]);
      if (nan_key && i >= bad) {
        ASSERT_TRUE(std::isnan(got)) << "row " << i << " " << what;
      } else {
        ASSERT_FALSE(std::isnan(got)) << "row " << i << " " << what;
        err = std::max(err, std::abs(got - ref[i * Ev + e]));
      }
    }
  EXPECT_LT(err, 2.5e-2) << what;
}

// The vector Qᵀ transpose: blocks of 16 rows x 32 columns with ragged ends, odd column
// counts (the last column element by element), a row stride past the columns.
TEST(FlashKernel, TransposeU16MatchesTheLoop) {
  if (!flash_bf16_step_supported()) GTEST_SKIP() << "no AVX512_BF16 here";
  for (int64_t rows : {1, 15, 16, 17, 31, 32, 33, 100})
    for (int64_t cols : {1, 2, 7, 33, 64, 65}) {
      const int64_t rs = cols + 3, ld = rows + 5;
      std::vector<uint16_t> src(static_cast<std::size_t>(rows * rs));
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i * 2654435761u >> 7);
      std::vector<uint16_t> dst(static_cast<std::size_t>(cols * ld), 0xBEEF);
      detail::transpose_u16_avx512bf16(src.data(), rs, rows, cols, dst.data(), ld);
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t r = 0; r < ld; ++r)
          ASSERT_EQ(dst[c * ld + r], r < rows ? src[r * rs + c] : 0xBEEF) << rows << "x" << cols << " at " << r << ", " << c;
    }
}

TEST(FlashKernel, Bf16CausalStaircase) {
  if (!flash_bf16_step_supported()) GTEST_SKIP() << "no AVX512_BF16 here";
  for (bool masked : {false, true}) {
    check_bf16_staircase(4 * 192 + 1, 4 * 192 + 1, 192, 384, masked, masked);  // the default tile, odd length
    check_bf16_staircase(300, 300, 100, 100, masked, false);  // groups of 64 + 36 columns
    check_bf16_staircase(301, 517, 100, 100, masked, masked);  // S > L: the last block cut short
    check_bf16_staircase(331, 331, 128, 48, masked, false);  // key blocks shorter than query blocks
    check_bf16_staircase(257, 333, 64, 160, masked, false);  // key blocks longer
    check_bf16_staircase(400, 200, 130, 130, masked, masked);  // S < L: rows past S see every key
  }
}

}  // namespace
}  // namespace bp::kernels::cpu
