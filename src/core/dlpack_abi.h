#pragma once
// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html), written
// from the specification: the structs must match the published layout byte
// for byte, because producers and consumers in other libraries read them.
// Covers the legacy DLManagedTensor (0.x) and DLManagedTensorVersioned (1.x).
// Only Backplane's sources include this; public headers only name the
// managed-tensor structs.

#include <cstddef>
#include <cstdint>

extern "C" {

// Device kinds Backplane reads or writes (the full list is longer).
enum BpDLDeviceType : int32_t {
  kBpDLCPU = 1,
  kBpDLCUDA = 2,
  kBpDLCUDAHost = 3,     // pinned host memory
  kBpDLCUDAManaged = 13, // unified memory
};

// Type codes (DLDataTypeCode).
enum BpDLTypeCode : uint8_t {
  kBpDLInt = 0,
  kBpDLUInt = 1,
  kBpDLFloat = 2,
  kBpDLBfloat = 4,
  kBpDLComplex = 5,
  kBpDLBool = 6,
};

struct DLDevice {
  int32_t device_type;  // a DLDeviceType value (a C enum, so 4 bytes)
  int32_t device_id;
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL means compact row-major (0.x)
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

}  // extern "C"

// The version Backplane produces, and the flag bits of 1.x.
inline constexpr uint32_t kBpDLPackMajor = 1;
inline constexpr uint32_t kBpDLPackMinor = 0;
inline constexpr uint64_t kBpDLPackFlagReadOnly = 1ull << 0;
inline constexpr uint64_t kBpDLPackFlagIsCopied = 1ull << 1;

// Layout checks against the published ABI (x86-64 / LP64).
static_assert(sizeof(DLDevice) == 8);
static_assert(sizeof(DLDataType) == 4);
static_assert(offsetof(DLTensor, device) == 8 && offsetof(DLTensor, ndim) == 16 &&
              offsetof(DLTensor, dtype) == 20 && offsetof(DLTensor, shape) == 24 &&
              offsetof(DLTensor, strides) == 32 && offsetof(DLTensor, byte_offset) == 40);
static_assert(sizeof(DLTensor) == 48);
static_assert(offsetof(DLManagedTensor, manager_ctx) == 48 && offsetof(DLManagedTensor, deleter) == 56);
static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8 &&
              offsetof(DLManagedTensorVersioned, deleter) == 16 &&
              offsetof(DLManagedTensorVersioned, flags) == 24 &&
              offsetof(DLManagedTensorVersioned, dl_tensor) == 32);
