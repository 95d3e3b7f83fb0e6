// The vectorised fp32 -> bf16 / f16 roundings give exactly the bits of the
// scalar reference conversions (bp::bfloat16_from_float / half_from_float),
// for every variant this CPU has, over random bit patterns (subnormals, NaN,
// infinities, ties included) and every tail length; the widenings give the
// values of bfloat16_bits_to_float / half_bits_to_float for every 16-bit
// pattern; the chunked dtype entry points cover several chunks and refuse
// a dtype that is not 16-bit.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backplane/dtype.h"
#include "backplane/error.h"
#include "kernels/cpu/convert.h"

namespace bp::kernels::cpu {
namespace {

std::vector<float> inputs() {
  std::mt19937 gen(5);
  std::vector<float> v;
  for (int i = 0; i < 20000; ++i) {
    uint32_t u = gen();
    if (i % 7 == 0) u &= 0x807FFFFFu;                    // subnormals and zeros
    if (i % 11 == 0) u = (u & 0xFFFF0000u) | 0x8000u;    // exact ties
    if (i % 13 == 0) u |= 0x7F800000u;                   // infinities and NaNs
    float f;
    std::memcpy(&f, &u, sizeof f);
    v.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 65504.0f, 65520.0f, 1e-8f, 3.4e38f, -3.4e38f}) v.push_back(f);
  return v;
}

using Round = void (*)(const float*, uint16_t*, int64_t);

void expect_same(Round round, uint16_t (*reference)(float), const char* name) {
  const std::vector<float> x = inputs();
  for (int64_t n : {int64_t(x.size()), int64_t(1), int64_t(7), int64_t(15), int64_t(17), int64_t(33)}) {
    std::vector<uint16_t> got(static_cast<std::size_t>(n), 0xABCD);
    round(x.data(), got.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], reference(x[i])) << name << " at " << i << " of " << n << " (" << x[i] << ")";
  }
}

uint16_t bf16_ref(float f) { return bfloat16_from_float(f).bits; }
uint16_t f16_ref(float f) { return half_from_float(f).bits; }

TEST(Convert, EveryVariantMatchesTheScalarBits) {
  expect_same(round_f32_to_bf16_generic, bf16_ref, "bf16 generic");
  expect_same(round_f32_to_f16_generic, f16_ref, "f16 generic");
  if (gemm_isa_supported(GemmIsa::avx2)) {
    expect_same(round_f32_to_bf16_avx2, bf16_ref, "bf16 avx2");
    expect_same(round_f32_to_f16_avx2, f16_ref, "f16 avx2");
  }
  if (gemm_isa_supported(GemmIsa::avx512)) {
    expect_same(round_f32_to_bf16_avx512, bf16_ref, "bf16 avx512");
    expect_same(round_f32_to_f16_avx512, f16_ref, "f16 avx512");
  }
}

using Widen = void (*)(const uint16_t*, float*, int64_t);

// Every bit pattern, in blocks of each tail length; a NaN must stay a NaN
// of the same sign (vcvtph2ps quiets a signalling one), anything else keep
// its exact bits.
void expect_widens(Widen widen, float (*reference)(uint16_t), const char* name) {
  std::vector<uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (int64_t n : {int64_t(65536), int64_t(1), int64_t(7), int64_t(15), int64_t(17), int64_t(33)}) {
    for (int64_t begin = 0; begin + n <= 65536; begin += n * 97 + 1) {
      std::vector<float> got(static_cast<std::size_t>(n), 12345.0f);
      widen(all.data() + begin, got.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float want = reference(all[begin + i]);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got[i]) && std::signbit(got[i]) == std::signbit(want)) << name << " at " << begin + i;
        } else {
          uint32_t g, w;
          std::memcpy(&g, &got[i], sizeof g);
          std::memcpy(&w, &want, sizeof w);
          ASSERT_EQ(g, w) << name << " at pattern " << begin + i << " of a run of " << n;
        }
      }
    }
  }
}

TEST(Convert, EveryWideningMatchesTheScalarValues) {
  expect_widens(widen_bf16_to_f32_generic, bfloat16_bits_to_float, "bf16 generic");
  expect_widens(widen_f16_to_f32_generic, half_bits_to_float, "f16 generic");
  if (gemm_isa_supported(GemmIsa::avx2)) {
    expect_widens(widen_bf16_to_f32_avx2, bfloat16_bits_to_float, "bf16 avx2");
    expect_widens(widen_f16_to_f32_avx2, half_bits_to_float, "f16 avx2");
  }
  if (gemm_isa_supported(GemmIsa::avx512)) {
    expect_widens(widen_bf16_to_f32_avx512, bfloat16_bits_to_float, "bf16 avx512");
    expect_widens(widen_f16_to_f32_avx512, half_bits_to_float, "f16 avx512");
  }
}

// round_f32_to / widen_to_f32 over several 16 Ki chunks and a ragged last
// one, on whatever threads the test runs with: a round trip through bf16
// and f16 against the scalar references.
TEST(Convert, ChunkedEntryPointsCoverEveryElement) {
  const std::vector<float> base = inputs();
  std::vector<float> x;
  while (x.size() < 3 * 16384 + 123) x.insert(x.end(), base.begin(), base.end());
  x.resize(3 * 16384 + 123);
  const int64_t n = static_cast<int64_t>(x.size());
  for (GemmIsa isa : {GemmIsa::generic, GemmIsa::avx2, GemmIsa::avx512}) {
    if (!gemm_isa_supported(isa)) continue;
    for (DType dtype : {DType::bf16, DType::f16}) {
      std::vector<uint16_t> narrow(x.size(), 0xABCD);
      std::vector<float> wide(x.size(), 12345.0f);
      round_f32_to(dtype, isa, x.data(), narrow.data(), n);
      widen_to_f32(dtype, isa, narrow.data(), wide.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t bits = dtype == DType::bf16 ? bf16_ref(x[i]) : f16_ref(x[i]);
        ASSERT_EQ(narrow[i], bits) << dtype_name(dtype) << " at " << i;
        const float back = dtype == DType::bf16 ? bfloat16_bits_to_float(bits) : half_bits_to_float(bits);
        if (std::isnan(back)) ASSERT_TRUE(std::isnan(wide[i])) << dtype_name(dtype) << " at " << i;
        else ASSERT_EQ(wide[i], back) << dtype_name(dtype) << " at " << i;
      }
    }
  }
}

TEST(Convert, ChunkedEntryPointsRefuseOtherDtypes) {
  float f = 1.0f;
  uint16_t h = 0;
  for (DType dtype : {DType::f32, DType::f64, DType::i32}) {
    try {
      round_f32_to(dtype, GemmIsa::generic, &f, &h, 1);
      FAIL() << "round_f32_to accepted " << dtype_name(dtype);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Value);
      EXPECT_NE(std::string(e.what()).find(dtype_name(dtype)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bfloat16 or float16"), std::string::npos) << e.what();
    }
    EXPECT_THROW(widen_to_f32(dtype, GemmIsa::generic, &h, &f, 1), Error);
  }
  EXPECT_EQ(h, 0);  // nothing written
}

}  // namespace
}  // namespace bp::kernels::cpu
