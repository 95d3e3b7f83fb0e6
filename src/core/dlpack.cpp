// DLPack export and import (ABI in core/dlpack_abi.h).

#include <cstring>
#include <memory>

#include "backplane/error.h"
#include "backplane/tensor.h"
#include "core/dlpack_abi.h"
#include "core/tensor_internal.h"

namespace bp {
namespace {

// What an exported struct owns: a view of the tensor (which holds the
// storage) and the shape/strides arrays DLTensor points into.
struct ExportContext {
  Tensor tensor;
  Shape shape;
  Shape strides;
};

DLDataType dl_dtype(DType t, bool bf16_as_uint16) {
  switch (t) {
    case DType::f16: return {kBpDLFloat, 16, 1};
    case DType::bf16: return bf16_as_uint16 ? DLDataType{kBpDLUInt, 16, 1} : DLDataType{kBpDLBfloat, 16, 1};
    case DType::f32: return {kBpDLFloat, 32, 1};
    case DType::f64: return {kBpDLFloat, 64, 1};
    case DType::c64: return {kBpDLComplex, 64, 1};
    case DType::c128: return {kBpDLComplex, 128, 1};
    case DType::i8: return {kBpDLInt, 8, 1};
    case DType::i32: return {kBpDLInt, 32, 1};
    case DType::i64: return {kBpDLInt, 64, 1};
    case DType::boolean: return {kBpDLBool, 8, 1};
  }
  return {kBpDLFloat, 32, 1};
}

std::string dl_dtype_str(DLDataType t) {
  return "code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " +
         std::to_string(t.lanes);
}

DType dtype_from_dl(DLDataType t, bool uint16_as_bf16) {
  if (t.lanes == 1) {
    for (DType candidate : kAllDTypes) {
      const DLDataType d = dl_dtype(candidate, false);
      if (d.code == t.code && d.bits == t.bits) return candidate;
    }
    if (uint16_as_bf16 && t.code == kBpDLUInt && t.bits == 16) return DType::bf16;
  }
  throw_bad_value("from_dlpack", "a DLPack dtype with " + dl_dtype_str(t),
                  "one of " + dtype_allowed_names() + " with one lane");
}

Device device_from_dl(DLDevice d) {
  switch (d.device_type) {
    case kBpDLCPU:
    case kBpDLCUDAHost:
      return Device::cpu();
    case kBpDLCUDA:
    case kBpDLCUDAManaged:
      if (d.device_id >= 0) return Device::cuda(d.device_id);
      break;
    default:
      break;
  }
  throw_bad_value("from_dlpack",
                  "DLPack device type " + std::to_string(d.device_type) + " id " + std::to_string(d.device_id),
                  "kDLCPU (1), kDLCUDA (2), kDLCUDAHost (3) or kDLCUDAManaged (13)");
}

void fill_dl_tensor(DLTensor& out, ExportContext& ctx, const DLPackExportOptions& options) {
  const Tensor& t = ctx.tensor;
  out.data = t.data();
  out.byte_offset = 0;
  out.device = t.device().is_cpu() ? DLDevice{kBpDLCPU, 0} : DLDevice{kBpDLCUDA, t.device().index};
  out.ndim = static_cast<int32_t>(t.ndim());
  out.dtype = dl_dtype(t.dtype(), options.bf16_as_uint16);
  out.shape = ctx.shape.data();
  // Always given, although 0.x allows NULL for dense data: 1.x consumers may
  // require it.
  out.strides = ctx.strides.data();
}

std::unique_ptr<ExportContext> make_context(const Tensor& t) {
  if (!t.defined()) throw_bad_value("to_dlpack", "an undefined tensor", "a defined tensor");
  return std::make_unique<ExportContext>(ExportContext{t, t.shape(), t.strides()});
}

// The alignment an element needs: its size, or a component's for complex.
std::size_t element_alignment(DType t) {
  const std::size_t size = dtype_itemsize(t);
  return t == DType::c64 || t == DType::c128 ? size / 2 : size;
}

// Note [Misaligned DLPack data]
// DLPack lets a producer hand over data at any address (NumPy's
// frombuffer(b, offset=1) is a float32 array at an odd address). Every
// kernel, converter and packer here loads whole elements, which is
// undefined behaviour (and a fault on some CPUs) when they are not aligned
// to their size. So host data that is not aligned is copied, byte by byte,
// into a fresh aligned tensor, and the producer's memory is released at
// once: the result no longer shares memory with it (writes through the
// producer are not seen). Device memory cannot be copied that way and is
// refused with a clear error.
Tensor copy_misaligned(const char* first, const Shape& shape, const Shape& strides, DType dtype) {
  Tensor out = Tensor::empty(shape, dtype);
  char* dst = static_cast<char*>(out.data());
  const int64_t itemsize = static_cast<int64_t>(dtype_itemsize(dtype));
  detail::for_each_offset(shape, strides, [&](int64_t off) {
    std::memcpy(dst, first + off * itemsize, static_cast<std::size_t>(itemsize));
    dst += itemsize;
  });
  return out;
}

// The shared part of both imports. `release` frees the producer's struct;
// it is attached to the storage only after every check passed, so an error
// leaves ownership with the caller.
Tensor import_dl_tensor(const DLTensor& dl, std::function<void()> release, bool read_only,
                        const DLPackImportOptions& options) {
  const char* op = "from_dlpack";
  if (dl.ndim < 0) throw_bad_value(op, "ndim " + std::to_string(dl.ndim), "ndim >= 0");
  if (dl.ndim > 0 && dl.shape == nullptr) throw_bad_value(op, "a NULL shape", "a shape array");
  const DType dtype = dtype_from_dl(dl.dtype, options.uint16_as_bf16);
  const Device device = device_from_dl(dl.device);
  const Shape shape(dl.shape, dl.shape + dl.ndim);
  const int64_t itemsize = static_cast<int64_t>(dtype_itemsize(dtype));
  const int64_t numel = detail::checked_numel(shape, op, itemsize);  // Note [Checked sizes]
  const Shape strides = dl.strides != nullptr ? Shape(dl.strides, dl.strides + dl.ndim) : contiguous_strides(shape);

  // The storage starts at the lowest address the view touches (strides may
  // be negative), so element 0 sits at offset -lowest.
  const detail::Extent e = detail::element_extent(shape, strides, op, itemsize);
  if (numel > 0 && dl.data == nullptr) {
    throw_bad_value(op, "a NULL data pointer for shape " + detail::shape_str(shape), "a data pointer");
  }
  // byte_offset and the extent are added as addresses: an absurd pair must not wrap.
  const uintptr_t base = reinterpret_cast<uintptr_t>(dl.data);
  uintptr_t first_addr = 0, lowest_addr = 0, end_addr = 0;
  if (__builtin_add_overflow(base, dl.byte_offset, &first_addr) ||
      __builtin_sub_overflow(first_addr, static_cast<uintptr_t>(-e.lowest) * itemsize, &lowest_addr) ||
      __builtin_add_overflow(first_addr, static_cast<uintptr_t>(e.end) * itemsize, &end_addr)) {
    throw_bad_value(op, "data pointer, byte_offset " + std::to_string(dl.byte_offset) + " and shape " +
                            detail::shape_str(shape) + " that wrap around the address space",
                    "a view inside the address space");
  }
  char* first = dl.data == nullptr ? nullptr : static_cast<char*>(dl.data) + dl.byte_offset;
  if (numel > 0 && first_addr % element_alignment(dtype) != 0) {
    if (!device.is_cpu()) {
      throw_bad_value(op, "data at address " + std::to_string(first_addr) + " on " + device.str(),
                      "data aligned to its " + std::to_string(element_alignment(dtype)) + "-byte elements");
    }
    Tensor copy = copy_misaligned(first, shape, strides, dtype);
    if (release) release();  // nothing of the producer's is kept
    return copy;
  }
  char* lowest = first + e.lowest * itemsize;
  const std::size_t nbytes = static_cast<std::size_t>((e.end - e.lowest) * itemsize);
  auto storage = std::make_shared<Storage>(lowest, nbytes, device, std::move(release), read_only);
  return Tensor::from_storage(std::move(storage), shape, strides, -e.lowest, dtype);
}

}  // namespace

DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t, DLPackExportOptions options) {
  std::unique_ptr<ExportContext> ctx = make_context(t);
  auto managed = std::make_unique<DLManagedTensorVersioned>();
  managed->version = {kBpDLPackMajor, kBpDLPackMinor};
  managed->flags = (t.storage()->read_only() ? kBpDLPackFlagReadOnly : 0) |
                   (options.is_copy ? kBpDLPackFlagIsCopied : 0);
  fill_dl_tensor(managed->dl_tensor, *ctx, options);
  managed->manager_ctx = ctx.release();
  managed->deleter = [](DLManagedTensorVersioned* self) {
    delete static_cast<ExportContext*>(self->manager_ctx);
    delete self;
  };
  return managed.release();
}

DLManagedTensor* to_dlpack(const Tensor& t, DLPackExportOptions options) {
  std::unique_ptr<ExportContext> ctx = make_context(t);
  auto managed = std::make_unique<DLManagedTensor>();
  fill_dl_tensor(managed->dl_tensor, *ctx, options);
  managed->manager_ctx = ctx.release();
  managed->deleter = [](DLManagedTensor* self) {
    delete static_cast<ExportContext*>(self->manager_ctx);
    delete self;
  };
  return managed.release();
}

Tensor from_dlpack(DLManagedTensorVersioned* managed, DLPackImportOptions options) {
  if (managed == nullptr) throw_bad_value("from_dlpack", "a null pointer", "a DLManagedTensorVersioned");
  if (managed->version.major != kBpDLPackMajor) {
    // Another major version may lay the struct out differently: only the
    // version field may be read.
    throw_bad_value("from_dlpack", "DLPack version " + std::to_string(managed->version.major) + "." +
                                       std::to_string(managed->version.minor),
                    "major version " + std::to_string(kBpDLPackMajor));
  }
  const bool read_only = (managed->flags & kBpDLPackFlagReadOnly) != 0;
  return import_dl_tensor(
      managed->dl_tensor,
      [managed] {
        if (managed->deleter != nullptr) managed->deleter(managed);
      },
      read_only, options);
}

Tensor from_dlpack(DLManagedTensor* managed, DLPackImportOptions options) {
  if (managed == nullptr) throw_bad_value("from_dlpack", "a null pointer", "a DLManagedTensor");
  return import_dl_tensor(
      managed->dl_tensor,
      [managed] {
        if (managed->deleter != nullptr) managed->deleter(managed);
      },
      false, options);
}

}  // namespace bp
