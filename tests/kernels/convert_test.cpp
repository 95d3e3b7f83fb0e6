// The vectorised fp32 -> bf16 / f16 roundings give exactly the bits of the
// scalar reference conversions (bp::bfloat16_from_float / half_from_float),
// for every variant this CPU has, over random bit patterns (subnormals, NaN,
// infinities, ties included) and every tail length.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backplane/dtype.h"
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

}  // namespace
}  // namespace bp::kernels::cpu
