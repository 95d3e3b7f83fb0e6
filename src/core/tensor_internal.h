#pragma once
// Internal helpers shared by the tensor files: dim wrapping, index errors
// and strided traversal.

#include <cstdint>
#include <string>

#include "backplane/tensor.h"

namespace bp::detail {

// "[2, 3]".
std::string shape_str(const Shape& shape);

// IndexError "<op>: expected <allowed>, got <value>".
[[noreturn]] void throw_bad_index(const std::string& op, const std::string& value,
                                  const std::string& allowed);

// Wraps a negative dim; IndexError when outside [-ndim, ndim).
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// Calls fn(offset) for every element of (shape, strides) in row-major order,
// offset counted in elements from element [0, ...]. The innermost dim runs
// as a plain loop so contiguous rows stay cheap.
template <class Fn>
void for_each_offset(const Shape& shape, const Shape& strides, Fn&& fn) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  for (int64_t s : shape) {
    if (s == 0) return;
  }
  if (ndim == 0) {
    fn(int64_t{0});
    return;
  }
  const int64_t inner = shape[ndim - 1];
  const int64_t inner_stride = strides[ndim - 1];
  Shape index(ndim, 0);
  int64_t base = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) fn(base + i * inner_stride);
    // Odometer increment over the outer dims. base only ever holds the
    // offset of an element of the view, and a dim rolls back by
    // (size - 1) * stride, a part of the view's extent: neither overflows,
    // whatever the stride of a size-1 dim (found by the dlpack fuzzer:
    // size * stride did).
    int64_t d = ndim - 2;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        base += strides[d];
        break;
      }
      base -= strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Calls fn(a_offset, b_offset, inner) once per row (the innermost dim) of
// `shape`, with the offsets of the row's first element in two views of that
// shape with strides a_strides and b_strides: copies and conversions then
// run their inner loop (or one memcpy) per row. Nothing for an empty shape;
// one row of one element for a 0-d one.
template <class Fn>
void for_each_row_pair(const Shape& shape, const Shape& a_strides, const Shape& b_strides, Fn&& fn) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  for (int64_t s : shape) {
    if (s == 0) return;
  }
  if (ndim == 0) {
    fn(int64_t{0}, int64_t{0}, int64_t{1});
    return;
  }
  const int64_t inner = shape[ndim - 1];
  Shape index(ndim, 0);
  int64_t a = 0, b = 0;
  while (true) {
    fn(a, b, inner);
    int64_t d = ndim - 2;  // the odometer of for_each_offset, over two bases
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        a += a_strides[d];
        b += b_strides[d];
        break;
      }
      a -= a_strides[d] * (shape[d] - 1);
      b -= b_strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
    if (d < 0) return;
  }
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
