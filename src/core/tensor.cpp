// bp::Tensor: construction, metadata and the helpers of tensor_internal.h.

#include "backplane/tensor.h"

#include <cstring>

#include "backplane/error.h"
#include "core/tensor_internal.h"

namespace bp {
namespace detail {

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

void throw_bad_index(const std::string& op, const std::string& value, const std::string& allowed) {
  throw Error(ErrorKind::Index, op + ": expected " + allowed + ", got " + value, op, value, allowed);
}

void throw_bad_dim(int64_t dim, int64_t ndim, const char* op) {
  throw_bad_index(op, "dim " + std::to_string(dim),
                  ndim == 0 ? std::string("no dim (the tensor is 0-d)")
                            : "a dim in [" + std::to_string(-ndim) + ", " + std::to_string(ndim) + ")");
}

void throw_bad_dim(int64_t dim, int64_t ndim, const char* op, const char* arg) {
  throw_bad_dim(dim, ndim, (std::string(op) + ": " + arg).c_str());
}

Extent element_extent(const Shape& shape, const Shape& strides, const char* op, int64_t itemsize) {
  Extent e;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return Extent{};
  }
  bool overflow = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    int64_t far = 0;
    overflow |= __builtin_mul_overflow(shape[d] - 1, strides[d], &far);
    overflow |= far < 0 ? __builtin_add_overflow(e.lowest, far, &e.lowest) : __builtin_add_overflow(e.end, far, &e.end);
  }
  int64_t span = 0;
  overflow |= __builtin_add_overflow(e.end, 1, &e.end);
  overflow |= __builtin_sub_overflow(e.end, e.lowest, &span) || __builtin_mul_overflow(span, itemsize, &span);
  if (overflow) {
    throw_bad_value(op, "shape " + shape_str(shape) + " with strides " + shape_str(strides),
                    "a view spanning fewer than 2^63 bytes");
  }
  return e;
}

void check_value_count(const Shape& shape, std::size_t count, const char* op) {
  const int64_t n = checked_numel(shape, op);
  if (n != static_cast<int64_t>(count)) {
    throw_bad_value(op, std::to_string(count) + " values",
                    std::to_string(n) + " values for shape " + shape_str(shape));
  }
}

int64_t checked_numel(const Shape& shape, const char* op, int64_t itemsize) {
  int64_t n = 1, dense = itemsize;  // dense: the product with zeros as 1, in bytes
  for (int64_t s : shape) {
    if (s < 0) throw_bad_value(op, "shape " + shape_str(shape), "sizes >= 0");
    n *= s == 0 ? 0 : 1;  // stays 0 or 1 until the loop below
  }
  for (int64_t s : shape) {
    if (__builtin_mul_overflow(dense, s == 0 ? 1 : s, &dense)) {
      throw_bad_value(op, "shape " + shape_str(shape),
                      itemsize == 1 ? std::string("sizes whose product is below 2^63")
                                    : "sizes whose product times " + std::to_string(itemsize) +
                                          " bytes is below 2^63");
    }
  }
  return n == 0 ? 0 : dense / itemsize;
}

}  // namespace detail

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t running = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = running;
    running *= shape[i] == 0 ? 1 : shape[i];
  }
  return strides;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) { return empty(Shape(shape), dtype, device); }

Tensor Tensor::empty(Shape&& shape, DType dtype, Device device) {
  const int64_t n = detail::checked_numel(shape, "Tensor.empty", static_cast<int64_t>(dtype_itemsize(dtype)));
  Tensor t;
  t.storage_ = allocate_storage(device, static_cast<std::size_t>(n) * dtype_itemsize(dtype));
  t.strides_ = contiguous_strides(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  if (device.is_cpu()) {
    Tensor t = empty(shape, dtype, device);
    // All-zero bytes are zero for every dtype (IEEE +0.0, false, 0).
    std::memset(t.data(), 0, t.nbytes());
    return t;
  }
  return zeros(shape, dtype).to(device);
}

Tensor Tensor::from_buffer(const void* data, const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype);
  if (t.nbytes() > 0) {
    if (data == nullptr) throw_bad_value("Tensor.from_buffer", "a null buffer", "a host pointer");
    std::memcpy(t.data(), data, t.nbytes());
  }
  return t.to(device);
}

Tensor Tensor::from_storage(StoragePtr storage, const Shape& shape, const Shape& strides,
                            int64_t storage_offset, DType dtype) {
  const char* op = "Tensor.from_storage";
  if (!storage) throw_bad_value(op, "a null storage", "a storage");
  if (strides.size() != shape.size()) {
    throw_bad_value(op, std::to_string(strides.size()) + " strides",
                    std::to_string(shape.size()) + " (one per dim)");
  }
  detail::checked_numel(shape, op);
  const detail::Extent e = detail::element_extent(shape, strides, op, static_cast<int64_t>(dtype_itemsize(dtype)));
  const int64_t capacity = static_cast<int64_t>(storage->nbytes() / dtype_itemsize(dtype));
  int64_t first = 0, last = 0;
  const bool wraps = __builtin_add_overflow(storage_offset, e.lowest, &first) ||
                     __builtin_add_overflow(storage_offset, e.end, &last);
  if (e.end > e.lowest && (wraps || first < 0 || last > capacity)) {
    throw_bad_value(op,
                    "a view reaching elements [" + std::to_string(first) + ", " +
                        std::to_string(last) + ")",
                    "elements inside the storage's [0, " + std::to_string(capacity) + ")");
  }
  Tensor t;
  t.storage_ = std::move(storage);
  t.shape_ = shape;
  t.strides_ = strides;
  t.offset_ = storage_offset;
  t.dtype_ = dtype;
  return t;
}

void Tensor::throw_bad_dim(int64_t dim, int64_t ndim, const char* op) { detail::throw_bad_dim(dim, ndim, op); }

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (std::size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

Tensor Tensor::contiguous() const {
  check_defined("Tensor.contiguous");
  return is_contiguous() ? *this : clone();
}

Tensor Tensor::clone() const {
  check_defined("Tensor.clone");
  if (device().is_cuda()) return to(Device::cpu()).to(device());
  Tensor out = empty(shape_, dtype_);
  out.copy_from(*this);
  return out;
}


std::string Tensor::str() const {
  if (!defined()) return "Tensor(undefined)";
  return "Tensor(shape=" + detail::shape_str(shape_) + ", dtype=" + dtype_name(dtype_) +
         ", device=" + device().str() + ")";
}

void Tensor::throw_undefined(const char* op) {
  throw_runtime(op, std::string(op) + ": the tensor is undefined (default-constructed)");
}

void Tensor::check_element_type(DType wanted, const char* op) const {
  check_defined(op);
  if (wanted != dtype_) {
    throw_bad_type(op, std::string("a pointer to ") + dtype_name(wanted) + " elements",
                   std::string("the C++ type of ") + dtype_name(dtype_));
  }
}

}  // namespace bp
