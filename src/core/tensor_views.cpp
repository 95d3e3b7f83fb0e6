// Views: transpose, slice, select, reshape. None of them copies (reshape of
// a non-contiguous tensor excepted) (Note [Tensor storage and views]).

#include <limits>
#include <algorithm>

#include "backplane/error.h"
#include "backplane/tensor.h"
#include "core/tensor_internal.h"

namespace bp {

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  check_defined("Tensor.transpose");
  const int64_t a = detail::wrap_dim(dim0, ndim(), "Tensor.transpose");
  const int64_t b = detail::wrap_dim(dim1, ndim(), "Tensor.transpose");
  Tensor out = *this;
  std::swap(out.shape_[a], out.shape_[b]);
  std::swap(out.strides_[a], out.strides_[b]);
  return out;
}

Tensor Tensor::T() const {
  check_defined("Tensor.T");
  return ndim() < 2 ? *this : transpose(-2, -1);
}

Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop,
                     int64_t step) const {
  const char* op = "Tensor.slice";
  check_defined(op);
  const int64_t d = detail::wrap_dim(dim, ndim(), op);
  if (step == 0) throw_bad_value(op, "step 0", "a non-zero step");
  // As Python does, so -step below exists (UBSan: -INT64_MIN overflows).
  if (step == std::numeric_limits<int64_t>::min()) step = -std::numeric_limits<int64_t>::max();
  const int64_t n = shape_[d];
  // Python's rules (PySlice_AdjustIndices): negatives count from the end,
  // then clamp; the defaults depend on the direction.
  const auto adjust = [&](std::optional<int64_t> v, int64_t if_absent) {
    if (!v) return if_absent;
    int64_t x = *v < 0 ? *v + n : *v;
    if (x < 0) x = step < 0 ? -1 : 0;
    if (x >= n) x = step < 0 ? n - 1 : n;
    return x;
  };
  const int64_t first = adjust(start, step < 0 ? n - 1 : 0);
  const int64_t last = adjust(stop, step < 0 ? -1 : n);
  int64_t length = 0;
  if (step > 0 && last > first) length = (last - first - 1) / step + 1;
  if (step < 0 && first > last) length = (first - last - 1) / (-step) + 1;

  Tensor out = *this;
  out.shape_[d] = length;
  // A huge step (x[::2**62]) leaves at most one element, whose stride does
  // not matter; a longer slice's stride lies inside the view's extent.
  if (__builtin_mul_overflow(strides_[d], step, &out.strides_[d])) {
    if (length > 1) throw_bad_value(op, "step " + std::to_string(step), "a step whose stride fits in int64");
    out.strides_[d] = strides_[d];
  }
  // An empty slice keeps the offset; it must not point outside the storage.
  if (length > 0) out.offset_ = offset_ + first * strides_[d];
  return out;
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  const char* op = "Tensor.select";
  check_defined(op);
  const int64_t d = detail::wrap_dim(dim, ndim(), op);
  const int64_t n = shape_[d];
  if (index < -n || index >= n) {
    detail::throw_bad_index(op, "index " + std::to_string(index) + " for dim " + std::to_string(d),
                            n == 0 ? std::string("no index (the dim has size 0)")
                                   : "an index in [" + std::to_string(-n) + ", " + std::to_string(n) + ")");
  }
  const int64_t i = index < 0 ? index + n : index;
  Tensor out = *this;
  out.offset_ = offset_ + i * strides_[d];
  out.shape_.erase(out.shape_.begin() + d);
  out.strides_.erase(out.strides_.begin() + d);
  return out;
}

Tensor Tensor::expand(const Shape& shape) const {
  check_defined("Tensor.expand");
  const std::size_t n = shape.size(), have = shape_.size();
  bool ok = have <= n;
  Shape strides(n, 0);
  for (std::size_t i = 0; ok && i < have; ++i) {
    const int64_t size = shape_[i], want = shape[n - have + i];
    ok = size == want || size == 1;
    strides[n - have + i] = size == want ? strides_[i] : 0;
  }
  if (!ok)
    throw_bad_value("Tensor.expand", detail::shape_str(shape_) + " to " + detail::shape_str(shape),
                    "a target shape this shape broadcasts to (each dim equal, or 1)");
  return from_storage(storage_, shape, strides, offset_, dtype_);
}

Shape broadcast_shapes(const std::string& subject, const std::vector<std::pair<std::string, Shape>>& shapes,
                       const std::string& what) {
  std::size_t n = 0;
  for (const auto& s : shapes) n = std::max(n, s.second.size());
  Shape out(n, 1);
  for (const auto& [name, s] : shapes)
    for (std::size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[n - s.size() + i];
      if (s[i] != 1 && o != 1 && s[i] != o) {
        std::string got;
        for (const auto& [nm, sh] : shapes) got += (got.empty() ? "" : ", ") + nm + " " + detail::shape_str(sh);
        throw_bad_value(subject, got, what + " that broadcast (each dim equal, or 1)");
      }
      if (s[i] != 1) o = s[i];
    }
  return out;
}

Tensor Tensor::reshape(const Shape& shape) const {
  const char* op = "Tensor.reshape";
  check_defined(op);
  Shape target = shape;
  int64_t known = 1;
  int64_t inferred = -1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1 && inferred < 0) {
      inferred = static_cast<int64_t>(i);
    } else if (target[i] < 0) {
      throw_bad_value(op, "shape " + detail::shape_str(shape), "sizes >= 0 and at most one -1");
    } else if (__builtin_mul_overflow(known, target[i], &known)) {  // Note [Checked sizes]
      throw_bad_value(op, "shape " + detail::shape_str(shape), "sizes whose product is below 2^63");
    }
  }
  const int64_t n = numel();
  if (inferred >= 0) {
    if (known == 0 || n % known != 0) {
      throw_bad_value(op, "shape " + detail::shape_str(shape),
                      "a shape with " + std::to_string(n) + " elements (from " + detail::shape_str(shape_) + ")");
    }
    target[inferred] = n / known;
    known *= target[inferred];
  }
  if (known != n) {
    throw_bad_value(op, "shape " + detail::shape_str(shape),
                    "a shape with " + std::to_string(n) + " elements (from " + detail::shape_str(shape_) + ")");
  }
  detail::checked_numel(target, op);  // its contiguous strides fit too (a zero size hides the other sizes)
  const Tensor dense = contiguous();
  Tensor out = dense;
  out.shape_ = target;
  out.strides_ = contiguous_strides(target);
  return out;
}

}  // namespace bp
