// The sparse op from C++: the public API (backplane/ops/sparse.h) against
// plain float64 loops written here, every CPU implementation forced, the
// compressed layout's padding, and the SDK-free checks of cusparselt:spmma.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backplane/dispatch.h"
#include "backplane/error.h"
#include "backplane/ops/sparse.h"
#include "backplane/precision.h"
#include "ops/sparse/checks_cuda.h"
#include "ops/sparse/layout.h"

namespace bp {
namespace {

Tensor random_2d(int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (float& x : v) x = dist(gen);
  return Tensor::from_vector(v, {rows, cols});
}

float at(const Tensor& t, int64_t i, int64_t j) {
  return static_cast<const float*>(t.data())[i * t.stride(0) + j * t.stride(1)];
}

// out[r, j] = sum_c x[r, c] * w[j, c] in double.
std::vector<double> linear_oracle(const Tensor& x, const Tensor& w) {
  std::vector<double> out(static_cast<std::size_t>(x.size(0) * w.size(0)));
  for (int64_t r = 0; r < x.size(0); ++r)
    for (int64_t j = 0; j < w.size(0); ++j) {
      double s = 0;
      for (int64_t c = 0; c < x.size(1); ++c) s += double(at(x, r, c)) * double(at(w, j, c));
      out[static_cast<std::size_t>(r * w.size(0) + j)] = s;
    }
  return out;
}

TEST(Sparse, PruneKeepsTwoLargestMagnitudesPerGroup) {
  const Tensor w = Tensor::from_vector(std::vector<float>{0.5f, -3, 2, 1, 7, 0, 0, 0, -1, 1}, {1, 10});
  const Tensor p = sparse::prune_semi_structured(w);
  const std::vector<float> want = {0, -3, 2, 0, 7, 0, 0, 0, -1, 1};
  for (int64_t c = 0; c < 10; ++c) EXPECT_EQ(at(p, 0, c), want[static_cast<std::size_t>(c)]) << c;
}

TEST(Sparse, CompressedLayoutPadsToGroupsOfEight) {
  const auto s = sparse::to_sparse_semi_structured(random_2d(3, 13, 1), /*prune=*/true);
  EXPECT_EQ(s.values.shape(), (Shape{3, 8}));  // 13 columns -> 16 -> 4 groups, 2 values each
  EXPECT_EQ(s.meta.shape(), (Shape{3, 2}));
  EXPECT_EQ(s.meta.dtype(), DType::i8);
  EXPECT_EQ(ops::sparse::groups_of(13), 4);
  EXPECT_EQ(ops::sparse::groups_of(16), 4);
  EXPECT_EQ(ops::sparse::groups_of(17), 6);
}

TEST(Sparse, EveryCpuImplementationMatchesTheOracle) {
  const Tensor w = sparse::prune_semi_structured(random_2d(37, 70, 2));
  const auto s = sparse::to_sparse_semi_structured(w);
  const Tensor x = random_2d(21, 70, 3);
  const auto want = linear_oracle(x, w);
  for (const char* impl : {"sparse24:cpu", "sparse24:avx2", "dense:matmul", "ref:any"}) {
    dispatch::ImplementationsGuard only("sparse", {impl});
    const auto d = sparse::explain_linear(x, s);
    if (d.chosen == nullptr) continue;  // a sparse24 kernel on a CPU without its ISA (explain says why)
    EXPECT_EQ(d.chosen->name(), impl);
    const Tensor y = sparse::linear(x, s);
    ASSERT_EQ(y.shape(), (Shape{21, 37}));
    for (int64_t r = 0; r < 21; ++r)
      for (int64_t j = 0; j < 37; ++j)
        EXPECT_NEAR(at(y, r, j), want[static_cast<std::size_t>(r * 37 + j)], 1e-5) << impl << " " << r << "," << j;
    const Tensor z = sparse::mm(s, x.T());  // w @ x.T = (x @ w.T).T
    for (int64_t r = 0; r < 21; ++r)
      for (int64_t j = 0; j < 37; ++j) EXPECT_NEAR(at(z, j, r), want[static_cast<std::size_t>(r * 37 + j)], 1e-5);
  }
}

TEST(Sparse, RoundTripAndValidation) {
  const Tensor w = sparse::prune_semi_structured(random_2d(5, 9, 4));
  const Tensor back = sparse::to_sparse_semi_structured(w).to_dense();
  for (int64_t j = 0; j < 5; ++j)
    for (int64_t c = 0; c < 9; ++c) EXPECT_EQ(at(back, j, c), at(w, j, c));
  try {
    sparse::to_sparse_semi_structured(random_2d(2, 8, 5));
    FAIL() << "a dense weight passed as 2:4";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 0, columns 0..3"), std::string::npos) << e.what();
  }
}

TEST(SparseCudaChecks, DtypeCapabilityAndAlignment) {
  using ops::sparse::Params;
  EXPECT_EQ(ops::sparse::cuda_checks::alignment_of(DType::i8), 32);
  EXPECT_EQ(ops::sparse::cuda_checks::alignment_of(DType::bf16), 16);
  EXPECT_EQ(ops::sparse::cuda_checks::alignment_of(DType::f32), 8);
  Params p;
  p.device = Device::cpu();  // no CUDA device: capability unknown
  p.dtype = DType::f16;
  p.n = 64, p.k = 48, p.m = 24;  // m is not a multiple of 16
  p.x = Tensor::empty({24, 48}, DType::f16);
  const auto checks = ops::sparse::cuda_checks::spmma_checks();
  std::vector<std::string> failed;
  for (const auto& c : checks) {
    dispatch::Reasons r(true);
    r.begin_check(c.name);
    if (!c.fn(p, r)) failed.push_back(c.name + std::string(": ") + r.list().at(0).text());
  }
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_NE(failed[0].find("capability 8.0 or newer"), std::string::npos) << failed[0];
  EXPECT_NE(failed[1].find("multiples of 16"), std::string::npos) << failed[1];
  EXPECT_NE(failed[1].find("64, 48, 24"), std::string::npos) << failed[1];
  p.dtype = DType::f64;
  dispatch::Reasons r(true);
  r.begin_check(checks[0].name);
  EXPECT_FALSE(checks[0].fn(p, r));
}

// The names of the checks of cusparselt:spmma that fail for p (capability
// always fails here: no CUDA device).
std::vector<std::string> spmma_failures(const ops::sparse::Params& p) {
  std::vector<std::string> failed;
  for (const auto& c : ops::sparse::cuda_checks::spmma_checks()) {
    dispatch::Reasons r(true);
    r.begin_check(c.name);
    if (!c.fn(p, r)) failed.push_back(c.name);
  }
  return failed;
}

TEST(SparseCudaChecks, Tf32OperandStridesAndInt8Bias) {
  using ops::sparse::Params;
  Params p;
  p.device = Device::cpu();
  p.dtype = DType::f32;
  p.n = 64, p.k = 64, p.m = 32;
  const Tensor x = Tensor::empty({32, 64}, DType::f32);
  p.x = x;
  const std::string saved = precision::get_float32_matmul_precision();
  precision::set_float32_matmul_precision("highest");  // fp32 stays fp32: cuSPARSELt (TF32 only) may not run
  EXPECT_EQ(spmma_failures(p), (std::vector<std::string>{"capability", "tf32"}));
  precision::set_float32_matmul_precision("high");  // TF32 permitted
  EXPECT_EQ(spmma_failures(p), (std::vector<std::string>{"capability"}));
  precision::set_float32_matmul_precision(saved);

  p.dtype = DType::f16;
  p.x = Tensor::empty({64, 32}, DType::f16).T();  // a transposed view: one unit stride, ld 32
  EXPECT_EQ(spmma_failures(p), (std::vector<std::string>{"capability"}));
  p.x = Tensor::empty({32, 128}, DType::f16).slice(1, 0, 128, 2);  // no unit stride
  EXPECT_EQ(spmma_failures(p), (std::vector<std::string>{"capability", "operand"}));
  p.x = Tensor::empty({32, 72}, DType::f16).slice(1, 0, 64);  // ld 72: not a multiple of 16
  EXPECT_EQ(spmma_failures(p), (std::vector<std::string>{"capability", "operand"}));
  p.x = Tensor::empty({32, 65}, DType::f16).slice(1, 1, 65);  // ld 65 and starting 2 bytes in
  EXPECT_EQ(spmma_failures(p), (std::vector<std::string>{"capability", "operand"}));

  p.dtype = DType::i8;
  p.x = Tensor::empty({32, 64}, DType::i8);
  EXPECT_EQ(spmma_failures(p), (std::vector<std::string>{"capability"}));
  p.bias = Tensor::zeros({64}, DType::i8);
  EXPECT_EQ(spmma_failures(p), (std::vector<std::string>{"capability", "bias"}));
}

TEST(Sparse, Int8WeightsDecompress) {
  // cusparselt:spmma rebuilds int8 weights on the host: decompress_into takes 1-byte values.
  Tensor values = Tensor::zeros({1, 4}, DType::i8), meta = Tensor::zeros({1, 1}, DType::i8);
  auto* v = static_cast<int8_t*>(values.data());
  v[0] = 5, v[1] = -7, v[2] = 0, v[3] = 0;
  static_cast<int8_t*>(meta.data())[0] = static_cast<int8_t>(1 | 3 << 2);  // columns 1 and 3 of group 0
  const Tensor dense = ops::sparse::decompress(values, meta, 8, "test");
  const auto* d = static_cast<const int8_t*>(dense.data());
  const std::vector<int> got(d, d + 8), want = {0, 5, 0, -7, 0, 0, 0, 0};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace bp
