// The GEMM's rounding epilogue (Note [GEMM rounding epilogue] in
// src/kernels/cpu/gemm.cpp): with an Out16 destination, gemm_bf16 / gemm_f16
// round each finished tile into it, from the registers (micro_out16) or from
// the tile just written to C. The accuracy of the fp32 product is
// gemm_test.cpp's subject; here the oracle is the same GEMM without Out16,
// rounded afterwards by the portable scalar rounding, and the 16-bit results
// must be the same bits: at k past one and two k blocks, ragged tiles, the
// direct-B and GEMV shapes (which may decline and say so), beta 0 and 1,
// NaN and infinities, one and two threads, on every ISA this CPU runs.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backplane/dtype.h"
#include "backplane/runtime.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/gemm.h"
#include "kernels/thread_scope.h"

namespace {

namespace kc = bp::kernels::cpu;
using kc::GemmIsa;

struct Shape {
  int64_t m, n, k;
};

uint16_t to16(bool bf16, float x) { return bf16 ? bp::bfloat16_from_float(x).bits : bp::half_from_float(x).bits; }

using bp::test::ThreadScope;

// Runs one case; returns a description of the first mismatch, or "".
std::string check(GemmIsa isa, bool bf16, Shape s, float beta, bool specials, int threads, bool* fused) {
  ThreadScope scope(threads);
  std::mt19937 rng(static_cast<uint32_t>(s.m * 131 + s.n * 7 + s.k));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<uint16_t> a(static_cast<size_t>(s.m * s.k)), b(static_cast<size_t>(s.k * s.n));
  for (auto& x : a) x = to16(bf16, dist(rng));
  for (auto& x : b) x = to16(bf16, dist(rng));
  if (specials) {  // a NaN row, an infinite column and an overflow to infinity in f16
    a[0] = to16(bf16, std::numeric_limits<float>::quiet_NaN());
    if (s.m > 1) b[static_cast<size_t>(s.n - 1)] = to16(bf16, std::numeric_limits<float>::infinity());
    if (s.m > 2) a[static_cast<size_t>(2 * s.k)] = to16(bf16, bf16 ? 1e30f : 60000.f);
  }
  std::vector<float> c0(static_cast<size_t>(s.m * s.n));
  for (auto& x : c0) x = dist(rng);
  const kc::MatView<const uint16_t> va{a.data(), s.m, s.k, s.k, 1}, vb{b.data(), s.k, s.n, s.n, 1};
  auto* gemm = bf16 ? &kc::gemm_bf16 : &kc::gemm_f16;

  std::vector<float> want_c = c0;
  (void)gemm(isa, va, vb, {want_c.data(), s.m, s.n, s.n, 1}, 0.5f, beta, {}, nullptr);
  std::vector<uint16_t> want(want_c.size());
  if (bf16) {
    kc::round_f32_to_bf16_generic(want_c.data(), want.data(), static_cast<int64_t>(want.size()));
  } else {
    kc::round_f32_to_f16_generic(want_c.data(), want.data(), static_cast<int64_t>(want.size()));
  }

  std::vector<float> c = c0;
  std::vector<uint16_t> out(want.size(), 0xABCD);
  *fused = gemm(isa, va, vb, {c.data(), s.m, s.n, s.n, 1}, 0.5f, beta, {out.data(), s.n}, nullptr);
  if (!*fused) return "";  // declined: the caller rounds C, which the plain run checks
  for (size_t e = 0; e < out.size(); ++e) {
    const bool both_nan = std::isnan(bp::to_float(bp::BFloat16{want[e]})) && bf16 && want[e] == out[e];
    if (out[e] != want[e] && !both_nan)
      return "element " + std::to_string(e) + ": got bits " + std::to_string(out[e]) + ", want " +
             std::to_string(want[e]);
  }
  return "";
}

TEST(GemmRoundEpilogue, SameBitsAsRoundingAfterwards) {
  const std::vector<Shape> shapes = {{64, 64, 64},     {15, 33, 17},     {29, 50, 1030},  {300, 70, 2100},
                                     {700, 47, 130},   {2, 100, 40},     {1, 64, 64},     {64, 1, 64},
                                     {13, 31, 2},
                                     // shallow blocks by rows (Note [GEMM shallow blocks by rows]), either side of k = 32
                                     {97, 700, 16},    {45, 1000, 32},   {45, 1000, 33}};
  int fused_runs = 0;
  for (GemmIsa isa : {GemmIsa::generic, GemmIsa::avx2, GemmIsa::avx512, GemmIsa::avx512_bf16}) {
    if (!kc::gemm_isa_supported(isa)) continue;
    for (bool bf16 : {true, false}) {
      if (isa == GemmIsa::avx512_bf16 && !bf16) continue;  // f16 there is the fp32 kernel, checked under avx512
      for (const Shape& s : shapes)
        for (float beta : {0.f, 1.f})
          for (bool specials : {false, true})
            for (int threads : {1, 2}) {
              bool fused = false;
              const std::string err = check(isa, bf16, s, beta, specials, threads, &fused);
              fused_runs += fused;
              EXPECT_EQ(err, "") << kc::gemm_isa_name(isa) << (bf16 ? " bf16 " : " f16 ") << s.m << "x" << s.n
                                 << "x" << s.k << " beta " << beta << (specials ? " with NaN/Inf" : "") << " threads "
                                 << threads;
            }
    }
  }
  EXPECT_GT(fused_runs, 0) << "no shape took the rounding epilogue";
}

// One row (the GEMV path) and a transposed C cannot be rounded tile by tile:
// the GEMM says so and leaves the output alone for the caller to fill.
TEST(GemmRoundEpilogue, DeclinesWhatItCannotFuse) {
  std::vector<uint16_t> a(64, bp::bfloat16_from_float(1.f).bits), b(64 * 8, bp::bfloat16_from_float(1.f).bits);
  std::vector<float> c(8 * 64);
  std::vector<uint16_t> out(8 * 64, 0xABCD);
  const bool fused = kc::gemm_bf16(GemmIsa::generic, {a.data(), 1, 64, 64, 1}, {b.data(), 64, 8, 8, 1},
                                   {c.data(), 1, 8, 8, 1}, 1.f, 0.f, {out.data(), 8});
  EXPECT_FALSE(fused);
  EXPECT_EQ(out[0], 0xABCD);
  EXPECT_EQ(c[0], 64.f);
  // Column-major C (cs != 1): the driver transposes the problem.
  std::vector<uint16_t> a2(16 * 64, bp::bfloat16_from_float(1.f).bits);
  const bool fused2 = kc::gemm_bf16(GemmIsa::generic, {a2.data(), 16, 64, 64, 1}, {b.data(), 64, 8, 8, 1},
                                    {c.data(), 16, 8, 1, 16}, 1.f, 0.f, {out.data(), 8});
  EXPECT_FALSE(fused2);
  EXPECT_EQ(out[0], 0xABCD);
}

}  // namespace
