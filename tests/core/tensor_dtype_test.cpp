// DType names and parsing, Device parsing, and the f16/bf16 rounding.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "backplane/device.h"
#include "backplane/dtype.h"
#include "tensor_test_util.h"

namespace {

using bp::DType;
using bp::ErrorKind;
using bp::test::expect_error;

TEST(DType, NamesSizesAndParsingAgree) {
  const std::size_t sizes[] = {2, 2, 4, 8, 8, 16, 1, 4, 8, 1};
  int i = 0;
  for (DType t : bp::kAllDTypes) {
    EXPECT_EQ(bp::dtype_itemsize(t), sizes[i++]) << bp::dtype_name(t);
    EXPECT_EQ(bp::parse_dtype(bp::dtype_name(t)), t);
    EXPECT_EQ(bp::parse_dtype(bp::dtype_short_name(t)), t);
  }
  EXPECT_EQ(bp::parse_dtype("half"), DType::f16);
  EXPECT_EQ(bp::parse_dtype("long"), DType::i64);
  EXPECT_STREQ(bp::dtype_name(DType::bf16), "bfloat16");
  EXPECT_TRUE(bp::is_floating(DType::bf16));
  EXPECT_TRUE(bp::is_complex(DType::c64));
  EXPECT_FALSE(bp::is_integral(DType::boolean));
}

TEST(DType, BadNameIsValueErrorListingTheAllowedNames) {
  expect_error([] { bp::parse_dtype("float8"); }, ErrorKind::Value, {"dtype", "'float8'", "bfloat16", "complex128"});
  expect_error([] { bp::parse_dtype(""); }, ErrorKind::Value, {"''"});
  expect_error([] { bp::parse_dtype("Float32"); }, ErrorKind::Value, {"'Float32'"});
}

TEST(Device, ParseAndPrint) {
  EXPECT_EQ(bp::parse_device("cpu"), bp::Device::cpu());
  EXPECT_EQ(bp::parse_device("cpu:0"), bp::Device::cpu());  // issue 10 item 10: as PyTorch
  EXPECT_EQ(bp::parse_device("cuda"), bp::Device::cuda(0));
  EXPECT_EQ(bp::parse_device("cuda:3"), bp::Device::cuda(3));
  EXPECT_EQ(bp::Device::cuda(1).str(), "cuda:1");
  EXPECT_EQ(bp::Device::cpu().str(), "cpu");
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:+1", "cuda:1x", "cuda: 1", "CPU", "cpu:1", "cpu:", ""}) {
    expect_error([&] { bp::parse_device(bad); }, ErrorKind::Value,
                 {"device", (std::string("'") + bad + "'").c_str(), "'cuda:<index>'"});
  }
}

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(HalfConversion, KnownRoundings) {
  EXPECT_EQ(bp::half_bits_from_double(1.0), 0x3C00);
  EXPECT_EQ(bp::half_bits_from_double(-2.0), 0xC000);
  EXPECT_EQ(bp::half_bits_from_double(0.1), 0x2E66);
  EXPECT_EQ(bp::half_bits_from_double(65504.0), 0x7BFF);   // largest finite
  EXPECT_EQ(bp::half_bits_from_double(65519.0), 0x7BFF);   // below the midpoint
  EXPECT_EQ(bp::half_bits_from_double(65520.0), 0x7C00);   // the midpoint: ties to even = inf
  EXPECT_EQ(bp::half_bits_from_double(1e10), 0x7C00);
  EXPECT_EQ(bp::half_bits_from_double(-std::numeric_limits<double>::infinity()), 0xFC00);
  EXPECT_EQ(bp::half_bits_from_double(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(bp::half_bits_from_double(std::ldexp(1.0, -25)), 0x0000);  // tie to even (0)
  EXPECT_EQ(bp::half_bits_from_double(std::ldexp(1.0000001, -25)), 0x0001);
  EXPECT_EQ(bp::half_bits_from_double(std::ldexp(3.0, -25)), 0x0002);  // tie to even (2)
  EXPECT_EQ(bp::half_bits_from_double(std::ldexp(1023.5, -24)), 0x0400);  // carry into the smallest normal
  EXPECT_EQ(bp::half_bits_from_double(1.0 + std::ldexp(1.0, -11)), 0x3C00);      // tie, even below
  EXPECT_EQ(bp::half_bits_from_double(1.0 + std::ldexp(3.0, -11)), 0x3C02);      // tie, even above
  EXPECT_EQ(bp::half_bits_from_double(-0.0), 0x8000);
  EXPECT_EQ(bp::half_bits_from_double(1e-30), 0x0000);
  const uint16_t nan = bp::half_bits_from_double(std::nan(""));
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
}

TEST(BFloat16Conversion, KnownRoundings) {
  EXPECT_EQ(bp::bfloat16_bits_from_double(1.0), 0x3F80);
  EXPECT_EQ(bp::bfloat16_bits_from_double(1.0 + std::ldexp(1.0, -8)), 0x3F80);  // tie, even below
  EXPECT_EQ(bp::bfloat16_bits_from_double(1.0 + std::ldexp(3.0, -8)), 0x3F82);  // tie, even above
  EXPECT_EQ(bp::bfloat16_bits_from_double(std::numeric_limits<float>::max()), 0x7F80);  // rounds to inf
  EXPECT_EQ(bp::bfloat16_bits_from_double(-3.0), 0xC040);
  const uint16_t nan = bp::bfloat16_bits_from_double(std::nan(""));
  EXPECT_TRUE(std::isnan(bp::bfloat16_bits_to_float(nan)));
  // Smallest bf16 subnormal is 2^-133; half of it ties to zero.
  EXPECT_EQ(bp::bfloat16_bits_from_double(std::ldexp(1.0, -133)), 0x0001);
  EXPECT_EQ(bp::bfloat16_bits_from_double(std::ldexp(1.0, -134)), 0x0000);
}

// Every 16-bit pattern widens exactly and narrows back to itself; the float
// path agrees with the reference bf16 definition (the top half of an f32).
TEST(HalfConversion, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float h = bp::half_bits_to_float(bits);
    const float bf = bp::bfloat16_bits_to_float(bits);
    if (!std::isnan(h)) ASSERT_EQ(bp::half_bits_from_double(h), bits) << std::hex << b;
    if (!std::isnan(bf)) {
      ASSERT_EQ(bp::bfloat16_bits_from_double(bf), bits) << std::hex << b;
      ASSERT_EQ(bf, from_bits(b << 16));
    }
  }
}

// The inline f32 -> bf16 rounding gives the bits of the reference (through
// double) for every upper half of an f32 with lower halves on both sides of
// each tie (exact, just below, at, just above half, the largest): zeros,
// subnormals, the carry into the exponent and into infinity, infinities and
// NaNs with any payload, both signs.
TEST(BFloat16Conversion, InlineFloatRoundingMatchesTheReferenceBits) {
  const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xC000, 0xFFFF};
  for (uint32_t hi = 0; hi <= 0xFFFF; ++hi)
    for (uint32_t lo : lows) {
      const float x = from_bits(hi << 16 | lo);
      ASSERT_EQ(bp::bfloat16_bits_from_float(x), bp::bfloat16_bits_from_double(x)) << std::hex << (hi << 16 | lo);
    }
}

// The inline f32 -> f16 rounding gives the bits of the reference (through
// double) on every f32 exponent, both signs, every pattern of the mantissa
// bits it keeps, and the dropped bits on both sides of the tie (zero, one,
// just below, at and just above half, all ones). Where the result is
// subnormal (exponents below 2^-14) the tie moves up one bit per exponent,
// and below 2^-25 the whole mantissa is dropped. (Checked once over all 2^32
// patterns as well.)
TEST(HalfConversion, InlineFloatRoundingMatchesTheReferenceBits) {
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t e = 0; e < 256; ++e) {
      const uint32_t dropped = e >= 113 ? 13 : std::min<uint32_t>(13 + 113 - e, 24);
      const uint32_t tie = 1u << (dropped - 1);
      const uint32_t lows[] = {0, 1, tie - 1, tie, tie + 1, 2 * tie - 1};
      for (uint32_t kept = 0; kept < (1u << (23 - std::min<uint32_t>(dropped, 23))); ++kept)
        for (uint32_t lo : lows) {
          const uint32_t mant = ((kept << dropped) | lo) & 0x7FFFFFu;
          const float x = from_bits(sign | e << 23 | mant);
          ASSERT_EQ(bp::half_bits_from_float(x), bp::half_bits_from_double(x)) << std::hex << (sign | e << 23 | mant);
        }
    }
}

TEST(HalfConversion, FloatWrappersAreTheSameRounding) {
  EXPECT_EQ(bp::half_from_float(0.1f).bits, bp::half_bits_from_double(0.1f));
  EXPECT_EQ(bp::to_float(bp::bfloat16_from_float(2.5f)), 2.5f);
  EXPECT_EQ(bp::to_float(bp::half_from_float(-0.5f)), -0.5f);
}

}  // namespace
