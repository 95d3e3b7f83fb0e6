#pragma once
// bp::Tensor: an owning, reference-counted, strided array with a dtype and a
// device. It is not a general tensor library: it holds what the ops need
// (views, dtype and device conversion, DLPack) and no arithmetic.
//
// Note [Tensor storage and views]
// A Tensor is a view: (storage, shape, strides, storage_offset, dtype).
// Shape and strides count elements, not bytes; strides may be zero or
// negative (a reversed slice). Copying a Tensor copies the view and shares
// the Storage (std::shared_ptr), so slices, transposes and DLPack exports
// keep the memory alive; the Storage frees it (or runs a DLPack producer's
// deleter) when the last view goes. Views never copy; contiguous(), to()
// and clone() return new storage unless nothing needs to change.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "backplane/device.h"
#include "backplane/dtype.h"
#include "backplane/shape.h"

// The DLPack ABI structs (defined in src/core/dlpack_abi.h, matching the
// public DLPack 1.x layout); public headers only name them.
extern "C" {
struct DLManagedTensor;
struct DLManagedTensorVersioned;
}

namespace bp {

// A block of memory on one device. Not copyable: share it through StoragePtr.
class Storage {
 public:
  // `release` runs once when the storage dies (frees the block, or calls a
  // DLPack producer's deleter); it may be empty for memory owned elsewhere.
  Storage(void* data, std::size_t nbytes, Device device, std::function<void()> release,
          bool read_only = false);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // Set for memory imported from a producer that marked it read-only
  // (DLPack 1.x flag); Backplane never writes into such storage.
  bool read_only() const { return read_only_; }

 private:
  void* data_;
  std::size_t nbytes_;
  Device device_;
  std::function<void()> release_;
  bool read_only_;
};
using StoragePtr = std::shared_ptr<Storage>;

// Allocates nbytes on `device` through Backplane's allocator (64-byte aligned
// on the CPU, counted in memory_stats()). Also the way ops get workspaces.
// A cuda device needs the CUDA library and that device, else RuntimeError.
StoragePtr allocate_storage(Device device, std::size_t nbytes);

namespace detail {
// dim wrapped into [0, ndim), or -1 when it lies outside [-ndim, ndim).
inline int64_t wrapped_dim(int64_t dim, int64_t ndim) {
  if (dim >= 0 && dim < ndim) [[likely]]
    return dim;
  return dim < 0 && dim >= -ndim ? dim + ndim : -1;
}
}  // namespace detail

class Tensor {
 public:
  // An undefined tensor (defined() is false); every other call on it raises.
  Tensor() = default;

  // Uninitialised contiguous memory.
  static Tensor empty(const Shape& shape, DType dtype, Device device = Device::cpu());
  static Tensor empty(Shape&& shape, DType dtype, Device device = Device::cpu());  // takes the shape's memory
  static Tensor zeros(const Shape& shape, DType dtype, Device device = Device::cpu());
  // Copies a dense row-major host buffer of the given shape and dtype.
  static Tensor from_buffer(const void* data, const Shape& shape, DType dtype,
                            Device device = Device::cpu());
  template <class Elem>
  static Tensor from_vector(const std::vector<Elem>& values, const Shape& shape,
                            Device device = Device::cpu());
  // A view of existing storage; checks that every element lies inside it.
  static Tensor from_storage(StoragePtr storage, const Shape& shape, const Shape& strides,
                             int64_t storage_offset, DType dtype);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const {
    check_defined("Tensor.device");
    return storage_->device();
  }
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  // Negative dims count from the end; out of range is an IndexError.
  // These accessors are inline, their errors out of line: an op call reads
  // a few dozen of them (Note [Shapes without the heap] has the budget).
  int64_t size(int64_t dim) const { return shape_[wrapped(dim, "Tensor.size")]; }
  int64_t stride(int64_t dim) const { return strides_[wrapped(dim, "Tensor.stride")]; }
  int64_t storage_offset() const { return offset_; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape_) n *= s;
    return n;
  }
  std::size_t itemsize() const { return dtype_itemsize(dtype_); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * itemsize(); }
  const StoragePtr& storage() const { return storage_; }

  // Row-major dense (dims of size 1 may have any stride; empty tensors are
  // contiguous).
  bool is_contiguous() const;
  // This tensor if already contiguous, else a dense copy.
  Tensor contiguous() const;
  // Always a dense copy with its own storage.
  Tensor clone() const;

  // Views.
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  // Matrix transpose: swaps the last two dims (numpy's .T for 2-D; for N-D
  // this is PyTorch's .mT, not numpy's reversal of all dims); 0-d and 1-d
  // tensors come back unchanged, as numpy's .T does.
  Tensor T() const;
  // Python slice semantics for one dim: start/stop may be negative (counted
  // from the end) or absent, are clamped to the dim, and step may be
  // negative but not zero.
  Tensor slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop,
               int64_t step = 1) const;
  // Drops `dim`, keeping index `index` (negative counts from the end).
  Tensor select(int64_t dim, int64_t index) const;
  // Same elements in a new shape (one entry may be -1); a view when the
  // tensor is contiguous, else a copy.
  Tensor reshape(const Shape& shape) const;
  // A view broadcast to `shape` (NumPy's rules: missing leading dims are
  // added, size-1 dims stretch with stride 0); nothing is copied.
  // ValueError when this shape does not broadcast to `shape`.
  Tensor expand(const Shape& shape) const;

  // Conversion. Each returns this tensor when nothing changes.
  // Between all dtypes: floats to integers truncate toward zero and
  // saturate (NaN becomes 0), complex to real keeps the real part, anything
  // to bool is "!= 0", to f16/bf16 rounds to nearest even. On a cuda device
  // the conversion runs on the host (two copies), as the core has no CUDA
  // kernels.
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;
  // Writes src (same shape, any dtype) into this tensor's elements; CPU only.
  // src must not overlap this tensor's elements.
  void copy_from(const Tensor& src);

  // Address of element [0, 0, ...] (a device pointer for cuda tensors).
  void* data() const {
    check_defined("Tensor.data");
    return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(itemsize());
  }
  // Typed address of element [0, ...]; Elem must be the dtype's C++ type
  // (dtype_cpp_t), else TypeError.
  template <class Elem>
  Elem* data_ptr() const {
    check_element_type(cpp_dtype_v<Elem>, "Tensor.data_ptr");
    return static_cast<Elem*>(data());
  }

  // "Tensor(shape=[2, 3], dtype=float32, device=cpu)".
  std::string str() const;

 private:
  void check_defined(const char* op) const {
    if (storage_ == nullptr) [[unlikely]]
      throw_undefined(op);
  }
  [[noreturn]] static void throw_undefined(const char* op);
  std::size_t wrapped(int64_t dim, const char* op) const {
    const int64_t w = detail::wrapped_dim(dim, ndim());
    if (w < 0) [[unlikely]]
      throw_bad_dim(dim, ndim(), op);
    return static_cast<std::size_t>(w);
  }
  [[noreturn]] static void throw_bad_dim(int64_t dim, int64_t ndim, const char* op);
  void check_element_type(DType wanted, const char* op) const;

  StoragePtr storage_;
  Shape shape_, strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::f32;
};

namespace detail {
// ValueError unless `count` values fill `shape` exactly.
void check_value_count(const Shape& shape, std::size_t count, const char* op);
}  // namespace detail

template <class Elem>
Tensor Tensor::from_vector(const std::vector<Elem>& values, const Shape& shape, Device device) {
  static_assert(!std::is_same_v<Elem, bool>, "std::vector<bool> is bit-packed: use from_buffer");
  detail::check_value_count(shape, values.size(), "Tensor.from_vector");
  return from_buffer(values.data(), shape, cpp_dtype_v<Elem>, device);
}

// Row-major strides (in elements) of a dense tensor of this shape.
Shape contiguous_strides(const Shape& shape);

// The NumPy broadcast of named shapes. ValueError naming `subject` and
// every shape ("matmul: expected batch shapes that broadcast (each dim
// equal, or 1), got a [2, 3], b [4]") when they do not broadcast.
Shape broadcast_shapes(const std::string& subject, const std::vector<std::pair<std::string, Shape>>& shapes,
                       const std::string& what);

// ---------------------------------------------------------------- DLPack
// Export: the returned struct keeps the tensor's storage alive until its
// deleter runs (the consumer's job). `bf16_as_uint16` describes bf16 data as
// uint16 (for consumers without bfloat16, such as NumPy); `is_copy` sets the
// DLPack 1.x IS_COPIED flag (when the caller exported a fresh copy).
struct DLPackExportOptions {
  bool bf16_as_uint16 = false;
  bool is_copy = false;
};
DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t, DLPackExportOptions options = {});
DLManagedTensor* to_dlpack(const Tensor& t, DLPackExportOptions options = {});

// Import: wraps the producer's memory without copying and calls its deleter
// when the last Backplane view goes. On success the Tensor owns `managed`;
// on error (unsupported dtype, device, lanes or major version: ValueError)
// ownership stays with the caller. `uint16_as_bf16` reads uint16 data as
// bf16 bits (the inverse of bf16_as_uint16).
struct DLPackImportOptions {
  bool uint16_as_bf16 = false;
};
Tensor from_dlpack(DLManagedTensorVersioned* managed, DLPackImportOptions options = {});
Tensor from_dlpack(DLManagedTensor* managed, DLPackImportOptions options = {});

}  // namespace bp
