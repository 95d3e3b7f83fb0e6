// bp::Tensor: factories, views (transpose, slice, select, reshape),
// contiguity and dtype conversion on the CPU.

#include "backplane/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "tensor_test_util.h"

namespace {

using bp::DType;
using bp::ErrorKind;
using bp::Shape;
using bp::Tensor;
using bp::test::expect_error;

// 0, 1, 2, ... as float32 in the given shape.
Tensor iota(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return Tensor::from_vector(v, shape);
}

// The elements of a float32 tensor in row-major order (through contiguous()).
std::vector<float> values(const Tensor& t) {
  const Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

TEST(Tensor, EmptyAndZerosAreContiguousAndAligned) {
  Tensor t = Tensor::zeros({2, 3, 4}, DType::f64);
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 24u * 8);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.data_ptr<double>()[i], 0.0);
  EXPECT_EQ(t.device(), bp::Device::cpu());
  EXPECT_EQ(t.str(), "Tensor(shape=[2, 3, 4], dtype=float64, device=cpu)");
}

TEST(Tensor, ZeroDimAndEmptyTensors) {
  Tensor scalar = Tensor::from_vector(std::vector<int64_t>{42}, {});
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(*scalar.data_ptr<int64_t>(), 42);
  EXPECT_EQ(scalar.T().shape(), Shape{});
  EXPECT_EQ(scalar.to(DType::f16).to(DType::f32).data_ptr<float>()[0], 42.0f);

  Tensor none = Tensor::empty({3, 0, 2}, DType::f32);
  EXPECT_EQ(none.numel(), 0);
  EXPECT_TRUE(none.is_contiguous());
  EXPECT_NE(none.data(), nullptr);
  EXPECT_EQ(none.T().shape(), (Shape{3, 2, 0}));
  EXPECT_EQ(none.to(DType::c128).numel(), 0);
  EXPECT_EQ(none.slice(0, 1, 2).shape(), (Shape{1, 0, 2}));
}

TEST(Tensor, TransposeSwapsLastTwoDimsWithoutCopying) {
  Tensor a = iota({2, 3});
  Tensor t = a.T();
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.strides(), (Shape{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.storage(), a.storage());
  EXPECT_EQ(values(t), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // N-D: the matrix transpose of each batch entry.
  Tensor b = iota({2, 2, 3}).T();
  EXPECT_EQ(b.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values(b), (std::vector<float>{0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11}));
  EXPECT_EQ(iota({5}).T().shape(), Shape{5});
  EXPECT_EQ(values(iota({2, 3, 4}).transpose(0, 2).transpose(2, 0)), values(iota({2, 3, 4})));
}

TEST(Tensor, SliceFollowsPythonRules) {
  Tensor a = iota({10});
  EXPECT_EQ(values(a.slice(0, 2, 5)), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(values(a.slice(0, std::nullopt, std::nullopt, 3)), (std::vector<float>{0, 3, 6, 9}));
  EXPECT_EQ(values(a.slice(0, -3, std::nullopt)), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(values(a.slice(0, std::nullopt, std::nullopt, -1)),
            (std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(values(a.slice(0, 8, 1, -3)), (std::vector<float>{8, 5, 2}));
  EXPECT_EQ(values(a.slice(0, -100, 100)).size(), 10u);
  EXPECT_EQ(a.slice(0, 5, 2).numel(), 0);
  EXPECT_EQ(a.slice(0, 2, 5, -1).numel(), 0);
  Tensor reversed = a.slice(0, std::nullopt, std::nullopt, -2);
  EXPECT_EQ(reversed.strides(), Shape{-2});
  EXPECT_EQ(reversed.storage(), a.storage());

  Tensor m = iota({4, 5});
  Tensor v = m.slice(1, 1, std::nullopt, 2).slice(0, std::nullopt, std::nullopt, -1);
  EXPECT_EQ(v.shape(), (Shape{4, 2}));
  EXPECT_EQ(values(v), (std::vector<float>{16, 18, 11, 13, 6, 8, 1, 3}));
}

TEST(Tensor, SelectDropsADim) {
  Tensor m = iota({3, 4});
  EXPECT_EQ(values(m.select(0, 1)), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(values(m.select(1, -1)), (std::vector<float>{3, 7, 11}));
  Tensor s = m.select(0, 2).select(0, 3);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(*s.data_ptr<float>(), 11.0f);
}

TEST(Tensor, ViewsRejectBadIndices) {
  Tensor m = iota({3, 4});
  expect_error([&] { m.select(0, 3); }, ErrorKind::Index, {"Tensor.select", "index 3", "[-3, 3)"});
  expect_error([&] { m.select(1, -5); }, ErrorKind::Index, {"index -5", "[-4, 4)"});
  expect_error([&] { m.select(2, 0); }, ErrorKind::Index, {"dim 2", "[-2, 2)"});
  expect_error([&] { m.slice(0, 0, 1, 0); }, ErrorKind::Value, {"Tensor.slice", "step 0", "non-zero"});
  expect_error([&] { m.transpose(0, -3); }, ErrorKind::Index, {"Tensor.transpose", "dim -3"});
  expect_error([&] { iota({}).select(0, 0); }, ErrorKind::Index, {"0-d"});
  expect_error([&] { m.size(5); }, ErrorKind::Index, {"Tensor.size"});
  expect_error([&] { m.data_ptr<double>(); }, ErrorKind::Type, {"Tensor.data_ptr", "float64", "float32"});
  expect_error([] { Tensor::empty({2, -1}, DType::f32); }, ErrorKind::Value, {"Tensor.empty", "[2, -1]"});
  expect_error([] { Tensor().contiguous(); }, ErrorKind::Runtime, {"undefined"});
}

TEST(Tensor, ContiguousCopiesOnlyWhenNeeded) {
  Tensor a = iota({3, 4});
  EXPECT_EQ(a.contiguous().storage(), a.storage());
  Tensor t = a.T().contiguous();
  EXPECT_NE(t.storage(), a.storage());
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(values(t), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // A dim of size 1 may carry any stride and still be contiguous.
  EXPECT_TRUE(a.slice(0, 1, 2).is_contiguous());
  EXPECT_FALSE(a.slice(1, 2, 3).is_contiguous());  // a column: stride 4
  EXPECT_TRUE(a.slice(1, 2, 3).T().slice(1, 0, 1).is_contiguous());  // one element
  EXPECT_NE(a.clone().storage(), a.storage());
}

// Note [Checked sizes]: every size computed from a shape is checked.
TEST(Tensor, SizesThatOverflowAreClearErrors) {
  const int64_t big = int64_t{1} << 62;
  expect_error([&] { Tensor::empty({big, 4}, DType::f32); }, ErrorKind::Value, {"Tensor.empty", "2^63"});
  expect_error([&] { Tensor::empty({big / 2, 4}, DType::f64); }, ErrorKind::Value, {"Tensor.empty", "8 bytes"});
  expect_error([&] { Tensor::empty({0, big, big}, DType::f32); }, ErrorKind::Value, {"Tensor.empty"});
  expect_error([&] { Tensor::from_buffer(nullptr, {big, big}, DType::f32); }, ErrorKind::Value, {"2^63"});
  const Tensor t = Tensor::zeros({4, 6}, DType::f32);
  expect_error([&] { t.reshape({big, big, 0}); }, ErrorKind::Value, {"Tensor.reshape", "2^63"});
  expect_error([&] { t.reshape({0, big, big}); }, ErrorKind::Value, {"Tensor.reshape"});
  expect_error([&] { t.reshape({-1, big, big}); }, ErrorKind::Value, {"Tensor.reshape"});
  // A step whose stride would overflow leaves one element: fine.
  const Tensor one = t.slice(0, 0, std::nullopt, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(one.shape(), (Shape{1, 6}));
  // The most negative step (UBSan found its negation overflowing).
  EXPECT_EQ(t.slice(0, std::nullopt, std::nullopt, std::numeric_limits<int64_t>::min()).shape(), (Shape{1, 6}));
  const auto storage = t.storage();
  expect_error([&] { Tensor::from_storage(storage, {2, 2}, {big, big}, 0, DType::f32); }, ErrorKind::Value,
               {"Tensor.from_storage", "2^63"});
  expect_error([&] { Tensor::from_storage(storage, {1}, {1}, std::numeric_limits<int64_t>::max(), DType::f32); },
               ErrorKind::Value, {"Tensor.from_storage"});
}

// Found by the dlpack fuzzer (UBSan): copying a view whose size-1 dim has a
// huge stride (legal: that stride is never used) overflowed the odometer.
TEST(Tensor, SizeOneDimsWithHugeStridesCopy) {
  const Tensor t = Tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
  const Tensor v = Tensor::from_storage(t.storage(), {1, 2, 3}, {std::numeric_limits<int64_t>::max(), 3, 1}, 0,
                                        DType::f32);
  const Tensor c = v.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.data_ptr<float>()[i], float(i));
  const Tensor w = Tensor::from_storage(t.storage(), {2, 1, 3}, {3, std::numeric_limits<int64_t>::max(), 1}, 0,
                                        DType::f32).to(DType::f64);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(w.data_ptr<double>()[i], double(i));
}

TEST(Tensor, ReshapeViewsOrCopies) {
  Tensor a = iota({2, 6});
  Tensor r = a.reshape({3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 4}));
  EXPECT_EQ(r.storage(), a.storage());
  Tensor t = a.T().reshape({12});
  EXPECT_NE(t.storage(), a.storage());
  EXPECT_EQ(values(t)[1], 6.0f);
  expect_error([&] { a.reshape({5, -1}); }, ErrorKind::Value, {"Tensor.reshape", "[5, -1]", "12 elements"});
  expect_error([&] { a.reshape({-1, -1}); }, ErrorKind::Value, {"at most one -1"});
  expect_error([] { Tensor::from_vector(std::vector<float>{1, 2, 3}, {2, 2}); }, ErrorKind::Value,
               {"3 values", "4 values"});
}

TEST(TensorConvert, FloatToEveryDtypeAndBack) {
  const std::vector<double> v = {0.0, 1.0, -2.5, 3.75, 100.0, -0.5};
  Tensor src = Tensor::from_vector(v, {2, 3});
  for (DType t : bp::kAllDTypes) {
    Tensor back = src.to(t).to(DType::f64);
    for (std::size_t i = 0; i < v.size(); ++i) {
      double expected = v[i];
      if (bp::is_integral(t)) expected = std::trunc(expected);
      if (t == DType::boolean) expected = expected != 0.0;
      EXPECT_EQ(back.data_ptr<double>()[i], expected) << bp::dtype_name(t) << " element " << i;
    }
  }
}

TEST(TensorConvert, EdgeCases) {
  const double inf = std::numeric_limits<double>::infinity();
  Tensor special = Tensor::from_vector(std::vector<double>{std::nan(""), inf, -inf, 1e300, -1e300, 127.9}, {6});
  // (Each converted tensor is kept in a variable: data_ptr does not own.)
  const Tensor as_i8 = special.to(DType::i8);
  const int8_t* i8 = as_i8.data_ptr<int8_t>();
  EXPECT_EQ(std::vector<int>(i8, i8 + 6), (std::vector<int>{0, 127, -128, 127, -128, 127}));
  const Tensor as_i64 = special.to(DType::i64);
  const int64_t* i64 = as_i64.data_ptr<int64_t>();
  EXPECT_EQ(i64[1], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i64[2], std::numeric_limits<int64_t>::min());
  // Complex -> real keeps the real part; -> bool looks at both parts.
  Tensor c = Tensor::from_vector(std::vector<std::complex<float>>{{1.5f, 2.0f}, {0.0f, 3.0f}, {0.0f, 0.0f}}, {3});
  EXPECT_EQ(c.to(DType::f32).data_ptr<float>()[0], 1.5f);
  const Tensor as_bool = c.to(DType::boolean);
  const bool* b = as_bool.data_ptr<bool>();
  EXPECT_EQ(std::vector<bool>(b, b + 3), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(c.to(DType::c128).data_ptr<std::complex<double>>()[1], std::complex<double>(0.0, 3.0));
  // f32 -> f16 rounds to nearest even and overflows to inf.
  Tensor f = Tensor::from_vector(std::vector<float>{65520.0f, 0.1f}, {2});
  const Tensor as_f16 = f.to(DType::f16);
  const bp::Half* h = as_f16.data_ptr<bp::Half>();
  EXPECT_EQ(h[0].bits, 0x7C00);
  EXPECT_EQ(h[1].bits, 0x2E66);
  // Integer narrowing wraps (C++20 modular conversion); through complex128
  // an int64 rounds to the nearest double.
  Tensor big = Tensor::from_vector(std::vector<int64_t>{(1ll << 62) + 1}, {1});
  EXPECT_EQ(big.to(DType::i32).to(DType::i64).data_ptr<int64_t>()[0], 1);
  EXPECT_EQ(big.to(DType::c128).to(DType::i64).data_ptr<int64_t>()[0], 1ll << 62);
}

TEST(TensorConvert, StridedSourceAndDestination) {
  Tensor a = iota({3, 4});
  Tensor as_int = a.T().slice(0, std::nullopt, std::nullopt, -1).to(DType::i32);
  EXPECT_TRUE(as_int.is_contiguous());
  const int32_t* p = as_int.data_ptr<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(p, p + 12), (std::vector<int32_t>{3, 7, 11, 2, 6, 10, 1, 5, 9, 0, 4, 8}));
  // Into a strided destination: write a's transpose into the transpose of a
  // fresh 4x3 tensor (the destination is then a itself, laid out 3x4).
  Tensor dst = Tensor::zeros({4, 3}, DType::f64);
  Tensor dst_view = dst.T();
  dst_view.copy_from(a);
  EXPECT_EQ(dst.data_ptr<double>()[1], 4.0);  // dst[0][1] = a[1][0]
  expect_error([&] { dst.copy_from(a); }, ErrorKind::Value, {"Tensor.copy_from", "[3, 4]", "[4, 3]"});
}

// The element of t at a row-major linear index, read through its shape and
// strides one index at a time (an oracle apart from the row walker).
double element_at(const Tensor& t, int64_t linear) {
  int64_t off = t.storage_offset();
  for (int64_t d = t.ndim() - 1; d >= 0; --d) {
    off += (linear % t.size(d)) * t.stride(d);
    linear /= t.size(d);
  }
  const auto* base = static_cast<const float*>(t.storage()->data());
  return base[off];
}

// Note [Coalesced rows]: copies and conversions walk views whose dims merge,
// partly merge or do not merge at all (slices of outer dims, reversed and
// stepped slices, transposes, size-1 dims with arbitrary strides), into dense
// and strided destinations; every element is checked against element_at.
TEST(TensorConvert, CoalescedRowsMatchAnElementWiseWalk) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 300; ++trial) {
    const int ndim = pick(0, 4);
    Shape big;
    for (int d = 0; d < ndim; ++d) big.push_back(pick(1, 6));
    Tensor v = iota(big);
    for (int d = 0; d < ndim; ++d) {  // a slice per dim: some steps, some reversed, some whole
      const int64_t n = v.size(d);
      switch (pick(0, 3)) {
        case 0: break;
        case 1: v = v.slice(d, pick(0, static_cast<int>(n) - 1), std::nullopt); break;
        case 2: v = v.slice(d, std::nullopt, std::nullopt, pick(1, 2)); break;
        default: v = v.slice(d, std::nullopt, std::nullopt, -1); break;
      }
    }
    if (ndim >= 2 && pick(0, 1)) v = v.transpose(0, ndim - 1);
    std::vector<double> want(static_cast<std::size_t>(v.numel()));
    for (int64_t i = 0; i < v.numel(); ++i) want[static_cast<std::size_t>(i)] = element_at(v, i);
    // Same dtype into a dense tensor, a conversion, and a copy into a transposed destination.
    const std::vector<float> same = values(v);
    const Tensor wide = v.to(DType::f64);
    Tensor dst = Tensor::zeros(v.shape(), DType::f32);
    if (v.ndim() >= 2) {  // a transposed destination: the outer and inner dims swapped, then viewed back
      Shape swapped = v.shape();
      std::swap(swapped.front(), swapped.back());
      dst = Tensor::zeros(swapped, DType::f32).transpose(0, v.ndim() - 1);
    }
    dst.copy_from(v);
    for (int64_t i = 0; i < v.numel(); ++i) {
      const auto u = static_cast<std::size_t>(i);
      ASSERT_EQ(same[u], want[u]) << "trial " << trial << " element " << i;
      ASSERT_EQ(wide.data_ptr<double>()[i], want[u]) << "trial " << trial;
      ASSERT_EQ(element_at(dst, i), want[u]) << "trial " << trial;
    }
  }
}

}  // namespace
