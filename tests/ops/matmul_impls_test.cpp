// Every matmul implementation, forced with ImplementationsGuard, against an
// fp64 oracle: tile edges, odd sizes, transposed and sliced views, each dtype.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backplane/dispatch.h"
#include "ops/matmul_test_util.h"

namespace bp::testing {
namespace {

struct Case {
  std::string impl;
  DType dtype;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& info : dispatch::list_implementations("matmul")) {
    if (!info.available) continue;
    for (DType t : {DType::f32, DType::f64, DType::bf16, DType::f16}) out.push_back({info.name, t});
  }
  return out;
}

class MatmulImpl : public ::testing::TestWithParam<Case> {};

TEST_P(MatmulImpl, MatchesTheOracleOrRejectsWithAReason) {
  const Case c = GetParam();
  const dispatch::ImplementationsGuard only("matmul", {c.impl});
  const struct {
    int64_t m, n, k;
  } shapes[] = {{1, 1, 1}, {7, 5, 3}, {16, 16, 16}, {17, 33, 15}, {65, 31, 129}, {1, 48, 20}, {40, 1, 9}};
  for (const auto& s : shapes) {
    const Tensor a = random_tensor({s.m, s.k}, c.dtype, 1);
    const Tensor b = random_tensor({s.k, s.n}, c.dtype, 2);
    const dispatch::Decision d = explain_matmul(a, b);
    if (d.chosen == nullptr) {  // this implementation does not take this dtype: it must say why
      ASSERT_FALSE(d.rows.empty());
      bool has_reason = false;
      for (const auto& r : d.rows)
        if (r.implementation == c.impl) has_reason = !r.reasons.empty();
      EXPECT_TRUE(has_reason) << d.text();
      EXPECT_THROW(matmul(a, b), dispatch::NoImplementationError);
      return;
    }
    EXPECT_EQ(d.chosen->name(), c.impl);
    const Tensor out = matmul(a, b);
    EXPECT_EQ(out.dtype(), c.dtype);
    EXPECT_EQ(out.shape(), (Shape{s.m, s.n}));
    EXPECT_LE(max_rel_error(out, oracle_2d(a, b)), tolerance(c.dtype) * std::sqrt(double(s.k)))
        << c.impl << " " << dtype_name(c.dtype) << " " << s.m << "x" << s.n << "x" << s.k;
  }
}

TEST_P(MatmulImpl, StridedViews) {
  const Case c = GetParam();
  const dispatch::ImplementationsGuard only("matmul", {c.impl});
  const Tensor at_ = random_tensor({23, 19}, c.dtype, 3).T();  // [19, 23] transposed view
  const Tensor b = random_tensor({23, 41}, c.dtype, 4).slice(1, 1, 40, 2);  // [23, 20] with column stride 2
  const Tensor bt = random_tensor({20, 23}, c.dtype, 5).T();
  for (const Tensor& bb : {b, bt}) {
    const dispatch::Decision d = explain_matmul(at_, bb);
    if (d.chosen == nullptr) continue;  // e.g. a BLAS rejecting a non-unit-stride view (tested in Python)
    EXPECT_LE(max_rel_error(matmul(at_, bb), oracle_2d(at_, bb)), tolerance(c.dtype) * 5) << c.impl;
  }
}

// NaN and inf go where IEEE arithmetic sends them, in every implementation:
// a NaN in row i of A makes row i of C NaN, an inf in B makes its column
// ±inf (NaN where it meets a zero of A or an inf of the other sign). The
// finite values are checked by the tests above; here only the class of
// each element (NaN, +inf, -inf, finite) must match the fp64 oracle.
TEST_P(MatmulImpl, NanAndInfPropagate) {
  const Case c = GetParam();
  const dispatch::ImplementationsGuard only("matmul", {c.impl});
  // bf16 arithmetic allowed, so the bf16 kernels take f32 problems too.
  backends::mkldnn::matmul::flags_guard medium({.fp32_precision = flags::Precision::bf16});
  const auto cls = [](double x) { return std::isnan(x) ? 'n' : (std::isinf(x) ? (x > 0 ? '+' : '-') : 'f'); };
  const struct {
    int64_t m, n, k;
  } shapes[] = {{4, 5, 6}, {17, 33, 15}, {65, 70, 129}};
  for (const auto& s : shapes) {
    Tensor a = random_tensor({s.m, s.k}, DType::f64, 7), b = random_tensor({s.k, s.n}, DType::f64, 8);
    double* pa = a.data_ptr<double>();
    double* pb = b.data_ptr<double>();
    pa[2 * s.k + 1] = std::numeric_limits<double>::quiet_NaN();   // row 2: NaN
    pb[3 * s.n + 4] = std::numeric_limits<double>::infinity();    // column 4: ±inf
    pb[(s.k - 1) * s.n + 0] = -std::numeric_limits<double>::infinity();  // column 0 too, from the last k
    pa[0 * s.k + s.k - 1] = 0.0;                                   // 0 · -inf: NaN at (0, 0)
    a = a.to(c.dtype), b = b.to(c.dtype);
    if (explain_matmul(a, b).chosen == nullptr) return;  // dtype not taken (tested above)
    const Tensor got = matmul(a, b).to(DType::f64).contiguous();
    const std::vector<double> want = oracle_2d(a, b);
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(cls(got.data_ptr<double>()[i]), cls(want[i]))
          << c.impl << " " << dtype_name(c.dtype) << " " << s.m << "x" << s.n << "x" << s.k << " element ("
          << i / s.n << ", " << i % s.n << "): got " << got.data_ptr<double>()[i] << ", want " << want[i];
  }
}

INSTANTIATE_TEST_SUITE_P(All, MatmulImpl, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string name = info.param.impl + "_" + dtype_short_name(info.param.dtype);
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

}  // namespace
}  // namespace bp::testing
