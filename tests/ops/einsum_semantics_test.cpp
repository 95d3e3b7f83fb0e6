// einsum from C++: equations as torch.einsum reads them (implicit output,
// ellipses, diagonals, broadcasting), bad equations with positioned
// errors, both implementations forced against each other at every dtype
// and on strided views, the path the flags choose, and explain's notes.

#include <gtest/gtest.h>

#include "backplane/flags.h"
#include "backplane/ops/einsum.h"
#include "matmul_test_util.h"
#include "ops/einsum/equation.h"
#include "ops/einsum/params.h"

namespace bp::ops::einsum {
namespace {

using bp::testing::random_tensor;

std::string subs(const Equation& eq, const std::vector<int>& labels) { return eq.subscripts(labels); }

TEST(EinsumEquation, ImplicitOutputAndEllipsis) {
  Equation e = parse_equation("ba,cb", {{2, 3}, {4, 2}});
  EXPECT_EQ(subs(e, e.output), "ac");  // letters used once, alphabetical
  e = parse_equation("Ba,aB", {{2, 3}, {3, 2}});
  EXPECT_TRUE(e.output.empty());
  e = parse_equation("bA", {{2, 3}});
  EXPECT_EQ(subs(e, e.output), "Ab");  // A-Z before a-z
  e = parse_equation("...ij,...jk", {{5, 2, 3}, {3, 4}});
  EXPECT_EQ(e.output_shape(), (Shape{5, 2, 4}));  // the ellipsis first
  e = parse_equation("i...,j...->...ij", {{2, 1, 7}, {3, 6, 1}});  // broadcast inside the ellipsis
  EXPECT_EQ(e.output_shape(), (Shape{6, 7, 2, 3}));
  e = parse_equation("...ij->ij", {{4, 2, 3}});  // ellipsis dims the output lacks are summed (PyTorch)
  EXPECT_EQ(e.output_shape(), (Shape{2, 3}));
  e = parse_equation(" i j , j k -> i k ", {{2, 3}, {3, 4}});
  EXPECT_EQ(e.output_shape(), (Shape{2, 4}));
  e = parse_equation("ii->i", {{3, 3}});
  EXPECT_EQ(e.output_shape(), (Shape{3}));
  e = parse_equation("ij,j->i", {{3, 4}, {1}});  // size-1 broadcasting
  EXPECT_EQ(e.sizes[1], 4);
}

void expect_error(const std::string& eq, const std::vector<Shape>& shapes, const std::string& fragment) {
  try {
    (void)parse_equation(eq, shapes);
    ADD_FAILURE() << eq << " parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("einsum"), std::string::npos) << e.what();
  }
}

TEST(EinsumEquation, BadEquationsNameThePosition) {
  expect_error("ij,j1->i", {{2, 3}, {3, 1}}, "'1' at index 4");
  expect_error("i.j", {{2, 3}}, "'.' at index 1");
  expect_error("...i...", {{2, 3}}, "a second '...' at index 4");
  expect_error("ij->i->j", {{2, 3}}, "a second '->' at index 5");
  expect_error("ij->i,j", {{2, 3}}, "',' at index 5");
  expect_error("ij->k", {{2, 3}}, "'k' at index 4");
  expect_error("ij->ii", {{2, 3}}, "'i' again at index 5");
  expect_error("ij-i", {{2, 3}}, "'-' at index 2");
  expect_error("ij,jk", {{2, 3}}, "1 operand for 'ij,jk'");
  expect_error("ij", {{2, 3}, {3}}, "2 operands");
  expect_error("ij,jk", {{2, 3}, {3, 4, 5}}, "operand 1 (subscripts at index 3");
  expect_error("ij,jk", {{2, 3}, {4, 5}}, "subscript 'j'");
  expect_error("ii", {{2, 3}}, "repeated in operand 0");
  expect_error("...i,...i", {{2, 3}, {4, 3}}, "covered by '...'");
  expect_error("i...", {{}}, "at least 1 dimensions");
}

TEST(EinsumEquation, Sublists) {
  EXPECT_EQ(sublist_equation({{0, 1}, {1, 27}}, std::vector<int64_t>{0, 27}), "AB,Bb->Ab");
  EXPECT_EQ(sublist_equation({{ops::kEllipsis, 0}}, std::nullopt), "...A");
  EXPECT_THROW(sublist_equation({{52}}, std::nullopt), Error);
  EXPECT_THROW(sublist_equation({{-1}}, std::nullopt), Error);
}

// path:matmul and ref:any agree (ref:any is checked against NumPy in Python).
void expect_agree(const std::string& eq, const std::vector<Tensor>& ops, double tol) {
  Tensor a, b;
  {
    dispatch::ImplementationsGuard g("einsum", {"path:matmul"});
    a = bp::einsum(eq, ops).to(DType::f64).contiguous();
  }
  {
    dispatch::ImplementationsGuard g("einsum", {"ref:any"});
    b = bp::einsum(eq, ops).to(DType::f64).contiguous();
  }
  ASSERT_EQ(a.shape(), b.shape()) << eq;
  double scale = 1, err = 0;
  for (int64_t i = 0; i < b.numel(); ++i) scale = std::max(scale, std::abs(b.data_ptr<double>()[i]));
  for (int64_t i = 0; i < b.numel(); ++i) err = std::max(err, std::abs(a.data_ptr<double>()[i] - b.data_ptr<double>()[i]));
  EXPECT_LE(err / scale, tol) << eq;
}

TEST(EinsumRun, ImplementationsAgreeAtEveryDtypeAndOnStridedViews) {
  for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    const double tol = dt == DType::f64 ? 1e-12 : dt == DType::f32 ? 1e-5 : 3e-2;
    expect_agree("ij,jk->ik", {random_tensor({7, 5}, dt, 1), random_tensor({5, 9}, dt, 2)}, tol);
    expect_agree("bij,bjk,bkl->bil", {random_tensor({3, 4, 5}, dt, 3), random_tensor({3, 5, 6}, dt, 4),
                                      random_tensor({3, 6, 2}, dt, 5)}, tol);
    expect_agree("abc,cd,dea->eb", {random_tensor({2, 3, 4}, dt, 6), random_tensor({4, 5}, dt, 7),
                                    random_tensor({5, 6, 2}, dt, 8)}, tol);
    expect_agree("ii,ij->j", {random_tensor({4, 4}, dt, 9), random_tensor({4, 3}, dt, 10)}, tol);
    expect_agree("i,j,k->ijk", {random_tensor({2}, dt, 11), random_tensor({3}, dt, 12), random_tensor({4}, dt, 13)}, tol);
    expect_agree("...j,j...->...", {random_tensor({3, 1, 5}, dt, 14), random_tensor({5, 1, 4}, dt, 15)}, tol);
    // Strided: transposed and sliced views go in without copies of their own.
    const Tensor t = random_tensor({9, 6}, dt, 16).T();
    const Tensor s = random_tensor({9, 10}, dt, 17).slice(1, 1, std::nullopt, 2).slice(0, std::nullopt, std::nullopt, -1);
    expect_agree("ij,jk->ki", {t, s}, tol);
    expect_agree("ij,jk,kl->il", {t, random_tensor({9, 9}, dt, 18), s}, tol);
  }
}

TEST(EinsumRun, NanAndInfPropagate) {
  std::vector<float> a = {1, std::nanf(""), 2, 3}, b = {1, 1, 1, 1};
  const Tensor ta = Tensor::from_vector(a, {2, 2}), tb = Tensor::from_vector(b, {2, 2});
  const Tensor r = bp::einsum("ij,jk->ik", {ta, tb});
  EXPECT_TRUE(std::isnan(r.data_ptr<float>()[0]));
  EXPECT_EQ(r.data_ptr<float>()[2], 5.0f);
  std::vector<float> inf = {INFINITY, 1};
  const Tensor s = bp::einsum("i->", {Tensor::from_vector(inf, {2})});
  EXPECT_TRUE(std::isinf(s.data_ptr<float>()[0]));
}

TEST(EinsumRun, EmptyDimensionsGiveZerosOrEmpty) {
  const Tensor a = Tensor::zeros({3, 0}, DType::f32), b = Tensor::zeros({0, 4}, DType::f32);
  const Tensor r = bp::einsum("ij,jk->ik", {a, b});
  EXPECT_EQ(r.shape(), (Shape{3, 4}));
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(r.data_ptr<float>()[i], 0.0f);
  EXPECT_EQ(bp::einsum("ij->j", {a}).shape(), (Shape{0}));
}

TEST(EinsumRun, FlagsChooseThePath) {
  const std::vector<Tensor> ops = {random_tensor({2, 30}, DType::f32, 1), random_tensor({30, 30}, DType::f32, 2),
                                   random_tensor({30, 1}, DType::f32, 3)};
  auto note = [&] { return bp::explain_einsum("ab,bc,cd->ad", ops).notes.at(0); };
  EXPECT_NE(note().find("'auto': optimal"), std::string::npos) << note();
  {
    backends::opt_einsum::flags_guard g({.enabled = false});
    EXPECT_NE(note().find("left to right"), std::string::npos) << note();
    EXPECT_NE(note().find("[(0, 1), (0, 1)]"), std::string::npos) << note();
    expect_agree("ab,bc,cd->ad", ops, 1e-5);
  }
  {
    backends::opt_einsum::flags_guard g({.strategy = flags::EinsumStrategy::Dp});
    EXPECT_NE(note().find("'dp': dp"), std::string::npos) << note();
    EXPECT_NE(note().find("[(1, 2), (0, 1)]"), std::string::npos) << note();
  }
}

TEST(EinsumRun, ExplainShowsEachStepsMatmulDecision) {
  const dispatch::Decision d = bp::explain_einsum(
      "bij,bjk->bik", {random_tensor({4, 8, 16}, DType::f32, 1), random_tensor({4, 16, 8}, DType::f32, 2)});
  ASSERT_TRUE(d.chosen);
  EXPECT_EQ(d.chosen->name(), "path:matmul");
  bool step = false;
  for (const std::string& n : d.notes) step = step || (n.find("matmul batch=4 m=8 n=8 k=16 -> ") != std::string::npos);
  EXPECT_TRUE(step) << d.text();
}

TEST(EinsumRun, BadOperands) {
  const Tensor f = random_tensor({2, 2}, DType::f32, 1), d = random_tensor({2, 2}, DType::f64, 2);
  EXPECT_THROW(bp::einsum("ij,jk", {f, d}), Error);
  EXPECT_THROW(bp::einsum("ij", {Tensor::zeros({2, 2}, DType::i32)}), Error);
  EXPECT_THROW(bp::einsum("ij", {Tensor::zeros({2, 2}, DType::c64)}), Error);
  EXPECT_THROW(bp::einsum("", {}), Error);
  EXPECT_THROW(bp::einsum("ij", {Tensor()}), Error);
}

}  // namespace
}  // namespace bp::ops::einsum
