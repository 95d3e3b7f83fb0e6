// matmul / addmm / linear semantics, precision permissions, default choices
// and bad input.

#include <gtest/gtest.h>

#include "backplane/backends/cpu.h"
#include "backplane/precision.h"
#include "backplane_build_config.h"
#if BP_HAVE_ONEDNN
#include "backends/onednn/onednn_bf16.h"
#endif
#include "ops/matmul_test_util.h"

namespace bp::testing {
namespace {

TEST(MatmulSemantics, OneDimensionalAndBatched) {
  const Tensor v = random_tensor({5}, DType::f64, 1);
  const Tensor m = random_tensor({5, 3}, DType::f64, 2);
  EXPECT_EQ(matmul(v, v).shape(), Shape{});
  EXPECT_EQ(matmul(v, m).shape(), Shape{3});
  EXPECT_EQ(matmul(m.T(), v).shape(), Shape{3});
  const Tensor a = random_tensor({2, 1, 4, 5}, DType::f64, 3);
  const Tensor b = random_tensor({3, 5, 6}, DType::f64, 4);
  const Tensor c = matmul(a, b);
  ASSERT_EQ(c.shape(), (Shape{2, 3, 4, 6}));
  // Entry [1, 2] is a[1, 0] @ b[2].
  const Tensor want_a = a.select(0, 1).select(0, 0), want_b = b.select(0, 2);
  EXPECT_LE(max_rel_error(c.select(0, 1).select(0, 2).contiguous(), oracle_2d(want_a, want_b)), 1e-12);
  double dot = 0;
  for (int64_t i = 0; i < 5; ++i) dot += at(v, {i}) * at(v, {i});
  EXPECT_NEAR(at(matmul(v, v).reshape({1}), {0}), dot, 1e-12);
}

TEST(MatmulSemantics, AddmmAndLinear) {
  const Tensor a = random_tensor({4, 6}, DType::f64, 1), b = random_tensor({6, 3}, DType::f64, 2);
  const Tensor bias = random_tensor({3}, DType::f64, 3);
  const Tensor r = addmm(bias, a, b, 0.5, 2.0);
  auto want = oracle_2d(a, b);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) want[i * 3 + j] = 2.0 * want[i * 3 + j] + 0.5 * at(bias, {j});
  EXPECT_LE(max_rel_error(r, want), 1e-12);
  const Tensor w = random_tensor({3, 6}, DType::f64, 4);
  const Tensor y = linear(a, w, bias);
  auto want_y = oracle_2d(a, w.T());
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) want_y[i * 3 + j] += at(bias, {j});
  EXPECT_LE(max_rel_error(y, want_y), 1e-12);
}

TEST(MatmulSemantics, EmptyInnerDimension) {
  const Tensor a = Tensor::zeros({3, 0}, DType::f32), b = Tensor::zeros({0, 2}, DType::f32);
  const Tensor c = matmul(a, b);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) EXPECT_EQ(at(c, {i, j}), 0.0);
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(MatmulErrors, ClearMessages) {
  const Tensor a = random_tensor({2, 3}, DType::f32, 1);
  EXPECT_EQ(error_of([&] { matmul(a, random_tensor({4, 5}, DType::f32, 2)); }),
            "matmul: expected a's last dimension equal to b's second-to-last dimension, got shapes [2, 3] and "
            "[4, 5] (3 != 4)");
  EXPECT_NE(error_of([&] { matmul(random_tensor({2, 2, 3}, DType::f32, 1), random_tensor({3, 3, 4}, DType::f32, 2)); })
                .find("a batch [2], b batch [3]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { matmul(a, random_tensor({3, 4}, DType::f64, 2)); }).find("a float32 and b float64"),
            std::string::npos);
  EXPECT_NE(error_of([&] { matmul(Tensor::zeros({2, 3}, DType::boolean), Tensor::zeros({3, 2}, DType::boolean)); })
                .find("float16, bfloat16, float32, float64, complex64, complex128, int8, int32 or int64"),
            std::string::npos);
  EXPECT_NE(error_of([&] { addmm(random_tensor({5}, DType::f32, 1), a, random_tensor({3, 4}, DType::f32, 2)); })
                .find("bias [5] for a product of shape [2, 4]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { linear(a, random_tensor({4, 5}, DType::f32, 2)); }).find("linear"), std::string::npos);
}

bool available(const std::string& name) {
  for (const auto& i : dispatch::list_implementations("matmul"))
    if (i.name == name) return i.available;
  return false;
}

const dispatch::Row& row(const dispatch::Decision& d, const std::string& name) {
  for (const auto& r : d.rows)
    if (r.implementation == name) return r;
  throw std::runtime_error("no row " + name);
}

TEST(MatmulChoice, KnobsChooseWhatTheyShould) {
  const Tensor a = random_tensor({64, 64}, DType::f32, 1);
  {
    backends::mkldnn::matmul::flags_guard g({.fp32_precision = flags::Precision::ieee});
    const dispatch::Decision d = explain_matmul(a, a);
    ASSERT_NE(d.chosen, nullptr);
    EXPECT_NE(d.chosen->name(), "builtin:avx512_bf16");
    const auto& r = row(d, "builtin:avx512_bf16");
    if (available("builtin:avx512_bf16")) {
      ASSERT_EQ(r.status, dispatch::Status::rejected);
      EXPECT_EQ(r.reasons.at(0).check, "precision");
      EXPECT_EQ(r.reasons.at(0).got, "'ieee' (highest)");
    }
  }
  if (available("builtin:avx512_bf16")) {
    backends::mkldnn::matmul::flags_guard g({.fp32_precision = flags::Precision::bf16});
    EXPECT_EQ(explain_matmul(a, a).chosen->name(), "builtin:avx512_bf16");
  }
  if (available("openblas:gemm")) {
    backends::cpu::flags_guard g({.preferred_blas_library = backends::CpuBlasBackend::Openblas});
    const dispatch::Decision d = explain_matmul(a, a);
    EXPECT_EQ(d.chosen->name(), "openblas:gemm");
    EXPECT_EQ(d.rows.front().implementation, "openblas:gemm");
  }
  if (available("onednn:matmul")) {
    backends::cpu::flags_guard g({.preferred_blas_library = backends::CpuBlasBackend::Onednn});
    backends::mkldnn::flags_guard m({.enabled = false});
    const dispatch::Decision d = explain_matmul(a, a);
    EXPECT_NE(d.chosen->name(), "onednn:matmul");
    EXPECT_EQ(row(d, "onednn:matmul").reasons.at(0).text(), "enabled: expected mkldnn.enabled = True, got False");
  }
  {
    backends::mkldnn::matmul::flags_guard g({.fp32_precision = flags::Precision::tf32});
    const dispatch::Decision d = explain_matmul(a, a);
    bool says_exact = false;
    for (const auto& n : d.notes) says_exact = says_exact || n.find("which no CPU has") != std::string::npos;
    EXPECT_TRUE(says_exact) << d.text();
  }
}

TEST(MatmulPrecision, HighestIsExactMediumUsesBf16) {
  // 1 + 2^-10 is exact in fp32 but rounds to 1 in bf16 (8 significant bits):
  // the product of [x] and [x] reveals which arithmetic ran.
  const float x = 1.0f + 1.0f / 1024.0f;
  const Tensor a = Tensor::from_vector(std::vector<float>{x}, {1, 1});
  const double exact = double(x) * double(x);
  {
    backends::mkldnn::matmul::flags_guard g({.fp32_precision = flags::Precision::ieee});
    EXPECT_EQ(at(matmul(a, a), {0, 0}), static_cast<float>(exact));
  }
  backends::mkldnn::matmul::flags_guard g({.fp32_precision = flags::Precision::bf16});
  for (const char* impl : {"builtin:avx512_bf16", "onednn:matmul"}) {
    if (!available(impl)) continue;
    const dispatch::ImplementationsGuard only("matmul", {impl});
    // "medium" is a permission: where oneDNN has no bf16 (AVX2 machines) its
    // f32 product stays exact.
#if BP_HAVE_ONEDNN
    const bool bf16_runs = std::string(impl) != "onednn:matmul" || backends::onednn::has_bf16();
#else
    const bool bf16_runs = true;
#endif
    EXPECT_EQ(at(matmul(a, a), {0, 0}), bf16_runs ? 1.0 : static_cast<float>(exact)) << impl;
  }
}

}  // namespace
}  // namespace bp::testing
