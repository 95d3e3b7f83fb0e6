// bp::Shape (include/backplane/shape.h): std::vector<int64_t>'s behaviour,
// checked against a std::vector driven by the same random operations, across
// the inline / heap boundary (6 values), plus copies and moves between the
// two storage kinds and the conversions to and from std::vector.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backplane/shape.h"

namespace bp {
namespace {

void expect_same(const Shape& s, const std::vector<int64_t>& v) {
  ASSERT_EQ(s.size(), v.size());
  EXPECT_EQ(s.empty(), v.empty());
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(s[i], v[i]) << "at " << i;
  EXPECT_TRUE(s == v);
  EXPECT_EQ(std::vector<int64_t>(s), v);
  EXPECT_GE(s.capacity(), s.size());
}

TEST(Shape, RandomOperationsMatchVector) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    Shape s;
    std::vector<int64_t> v;
    for (int step = 0; step < 40; ++step) {
      const int64_t x = static_cast<int64_t>(rng() % 1000) - 500;
      switch (rng() % 9) {
        case 0: case 1: case 2:
          s.push_back(x), v.push_back(x);
          break;
        case 3:
          if (!v.empty()) s.pop_back(), v.pop_back();
          break;
        case 4: {
          const std::size_t n = rng() % 12;
          s.resize(n, x), v.resize(n, x);
          break;
        }
        case 5: {
          const std::size_t at = v.empty() ? 0 : rng() % (v.size() + 1);
          s.insert(s.begin() + at, x), v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), x);
          break;
        }
        case 6:
          if (!v.empty()) {
            const std::size_t at = rng() % v.size();
            s.erase(s.begin() + at), v.erase(v.begin() + static_cast<std::ptrdiff_t>(at));
          }
          break;
        case 7: {  // a range from itself: insert must copy it first
          const std::size_t n = v.size();
          s.insert(s.begin(), s.begin(), s.begin() + n / 2);
          v.insert(v.begin(), v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2));
          break;
        }
        default: {  // a copy and a move through the other storage kind
          Shape copy = s;
          Shape moved = std::move(copy);
          EXPECT_TRUE(copy.empty());  // NOLINT: moved-from is empty by contract
          s = moved;
          break;
        }
      }
      expect_same(s, v);
    }
  }
}

TEST(Shape, CopiesAndMovesAcrossTheInlineLimit) {
  for (std::size_t n : {0, 1, 5, 6, 7, 13}) {
    std::vector<int64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(i * 3 + 1);
    const Shape s(v);
    for (std::size_t m : {0, 2, 6, 9}) {
      Shape other(m, 42);
      other = s;  // copy-assign over either storage kind
      expect_same(other, v);
      Shape target(m, 7);
      target = Shape(v);  // move-assign
      expect_same(target, v);
      Shape a(v), b(m, 5);
      a.swap(b);
      expect_same(a, std::vector<int64_t>(m, 5));
      expect_same(b, v);
    }
  }
}

TEST(Shape, ConstructorsAndComparisons) {
  expect_same(Shape{}, {});
  expect_same(Shape{4096}, {4096});  // a list, as std::vector's braces
  expect_same(Shape(3), {0, 0, 0});  // a count, as std::vector's parentheses
  expect_same(Shape(2, -1), {-1, -1});
  const std::vector<int> ints = {1, 2, 3};
  expect_same(Shape(ints.begin(), ints.end()), {1, 2, 3});
  EXPECT_TRUE((Shape{1, 2} < Shape{1, 3}));
  EXPECT_TRUE((Shape{1, 2} < Shape{1, 2, 0}));
  EXPECT_FALSE((Shape{1, 2} == Shape{1, 2, 0}));
  EXPECT_TRUE((std::vector<int64_t>{1, 2} == Shape{1, 2}));
  Shape big(10, 1);
  EXPECT_EQ(big.back(), 1);
  big.clear();
  EXPECT_TRUE(big.empty());
  big.assign({9, 8});
  expect_same(big, {9, 8});
}

}  // namespace
}  // namespace bp
