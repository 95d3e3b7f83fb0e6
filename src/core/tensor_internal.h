#pragma once
// Internal helpers shared by the tensor files: dim wrapping, index errors
// and strided traversal.

#include <cstdint>
#include <string>
#include <vector>

#include "backplane/tensor.h"

namespace bp::detail {

// "[2, 3]".
std::string shape_str(const Shape& shape);

// IndexError "<op>: expected <allowed>, got <value>".
[[noreturn]] void throw_bad_index(const std::string& op, const std::string& value,
                                  const std::string& allowed);

// IndexError "<op>: expected a dim in [-ndim, ndim), got dim <dim>"; the
// second form names an op's argument, "<op>: <arg>".
[[noreturn]] void throw_bad_dim(int64_t dim, int64_t ndim, const char* op);
[[noreturn]] void throw_bad_dim(int64_t dim, int64_t ndim, const char* op, const char* arg);

// Wraps a negative dim; IndexError when outside [-ndim, ndim). Inline, the
// error out of line: ops wrap their dims on every call.
inline int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t w = wrapped_dim(dim, ndim);
  if (w < 0) [[unlikely]]
    throw_bad_dim(dim, ndim, op);
  return w;
}
// The same for an op's dim argument: the error's subject "<op>: <arg>"
// ("fftn: dim") is built only when the error is raised, not on every call.
inline int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op, const char* arg) {
  const int64_t w = wrapped_dim(dim, ndim);
  if (w < 0) [[unlikely]]
    throw_bad_dim(dim, ndim, op, arg);
  return w;
}

// Calls fn(a_offset, b_offset, inner, a_step, b_step) once per row of two
// views of `shape` with strides a_strides and b_strides: the row's first
// element in each view, its length and each view's stride along it. Dims
// both views can merge are merged first (Note [Coalesced rows]), so copies
// and conversions run their inner loop (or one memmove) over the longest
// rows the layouts allow. Nothing for an empty shape; one row of one element
// for a 0-d one.
//
// Note [Coalesced rows]
// Row-major, dims of size 1 are dropped and dim d joins the dim inside it
// when, in both views, stride[d] == stride[d + 1] * size[d + 1]: a dense
// tensor becomes one row, a batch of dense images sliced from a larger
// batch one row per image, instead of one row per innermost-dim line.
template <class Fn>
void for_each_row_pair(const Shape& shape, const Shape& a_strides, const Shape& b_strides, Fn&& fn) {
  for (int64_t s : shape) {
    if (s == 0) return;
  }
  struct Dim {
    int64_t size, a, b, index;  // the strides in each view, the odometer's position
  };
  std::vector<Dim> dims;  // the coalesced dims, outermost first (one allocation, as the odometer had)
  dims.reserve(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty() && dims.back().a == a_strides[d] * shape[d] && dims.back().b == b_strides[d] * shape[d]) {
      dims.back() = {dims.back().size * shape[d], a_strides[d], b_strides[d], 0};
      continue;
    }
    dims.push_back({shape[d], a_strides[d], b_strides[d], 0});
  }
  if (dims.empty()) {
    fn(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{1}, int64_t{1});
    return;
  }
  const Dim inner = dims.back();
  int64_t a = 0, b = 0;
  while (true) {
    fn(a, b, inner.size, inner.a, inner.b);
    // Odometer increment over the outer dims. The offsets only ever hold an
    // element of the views, and a dim rolls back by (size - 1) * stride, a
    // part of the view's extent: neither overflows (found by the dlpack
    // fuzzer when a size-1 dim's stride was multiplied by its size).
    auto d = static_cast<int64_t>(dims.size()) - 2;
    for (; d >= 0; --d) {
      Dim& m = dims[static_cast<std::size_t>(d)];
      if (++m.index < m.size) {
        a += m.a;
        b += m.b;
        break;
      }
      a -= m.a * (m.size - 1);
      b -= m.b * (m.size - 1);
      m.index = 0;
    }
    if (d < 0) return;
  }
}

// Calls fn(offset) for every element of (shape, strides) in row-major order,
// offset counted in elements from element [0, ...] (for_each_row_pair's rows
// over one view).
template <class Fn>
void for_each_offset(const Shape& shape, const Shape& strides, Fn&& fn) {
  for_each_row_pair(shape, strides, strides, [&](int64_t a, int64_t, int64_t inner, int64_t step, int64_t) {
    for (int64_t i = 0; i < inner; ++i) fn(a + i * step);
  });
}

// Note [Checked sizes]
// Every size computed from a shape (element counts, byte counts, strides,
// the extent of a view) is computed with overflow checks: shapes come from
// users, NumPy and DLPack producers, and a wrapped product would allocate
// too little and then write past it. An overflow is a ValueError naming the
// op and the shape.

// The number of elements of `shape`: sizes >= 0, and the product of the
// sizes (zeros counted as 1, so contiguous strides fit too) times
// `itemsize` within int64. Else ValueError naming `op`.
int64_t checked_numel(const Shape& shape, const char* op, int64_t itemsize = 1);

// Lowest and one-past-highest element offsets (relative to element 0) that
// a view touches; {0, 0} when it has no elements. ValueError naming `op`
// when they, or their span in bytes of `itemsize`, overflow int64.
struct Extent {
  int64_t lowest = 0;
  int64_t end = 0;
};
Extent element_extent(const Shape& shape, const Shape& strides, const char* op, int64_t itemsize = 1);

}  // namespace bp::detail
