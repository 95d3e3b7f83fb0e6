// DLPack export and import in C++: layout, lifetime (storage kept alive by
// the export, producer deleter called by the import), dtypes, errors.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backplane/runtime.h"
#include "backplane/tensor.h"
#include "core/dlpack_abi.h"
#include "tensor_test_util.h"

namespace {

using bp::DType;
using bp::ErrorKind;
using bp::Shape;
using bp::Tensor;
using bp::test::expect_error;

Tensor matrix() {
  return Tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
}

TEST(DLPackExport, DescribesTheViewAndKeepsStorageAlive) {
  const int64_t before = bp::memory_stats(bp::Device::cpu()).current_bytes;
  DLManagedTensorVersioned* m = nullptr;
  {
    Tensor t = matrix().T();
    m = bp::to_dlpack_versioned(t);
  }
  // The tensor is gone; the export still owns its storage.
  EXPECT_EQ(bp::memory_stats(bp::Device::cpu()).current_bytes, before + 24);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->flags, 0u);
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kBpDLCPU);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, kBpDLFloat);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(Shape(dl.shape, dl.shape + 2), (Shape{3, 2}));
  EXPECT_EQ(Shape(dl.strides, dl.strides + 2), (Shape{1, 3}));
  EXPECT_EQ(static_cast<const float*>(dl.data)[3], 3.0f);  // element [0][1]
  m->deleter(m);
  EXPECT_EQ(bp::memory_stats(bp::Device::cpu()).current_bytes, before);
}

TEST(DLPackExport, Bf16AsUint16AndCopyFlag) {
  Tensor t = Tensor::zeros({4}, DType::bf16);
  DLManagedTensorVersioned* m = bp::to_dlpack_versioned(t, {.bf16_as_uint16 = true, .is_copy = true});
  EXPECT_EQ(m->dl_tensor.dtype.code, kBpDLUInt);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 16);
  EXPECT_EQ(m->flags, kBpDLPackFlagIsCopied);
  m->deleter(m);
  DLManagedTensor* legacy = bp::to_dlpack(t);
  EXPECT_EQ(legacy->dl_tensor.dtype.code, kBpDLBfloat);
  legacy->deleter(legacy);
}

TEST(DLPack, EveryDtypeRoundTripsWithoutCopying) {
  const Tensor columns = Tensor::from_vector(std::vector<double>{1, 0, 3, 4, 5, 6}, {2, 3})
                              .slice(1, std::nullopt, std::nullopt, -2).contiguous();
  EXPECT_EQ(std::vector<double>(columns.data_ptr<double>(), columns.data_ptr<double>() + 4),
            (std::vector<double>{3, 1, 6, 4}));
  for (DType dtype : bp::kAllDTypes) {
    Tensor original = Tensor::from_vector(std::vector<double>{1, 0, 3, 4, 5, 6}, {2, 3}).to(dtype);
    Tensor view = original.slice(1, std::nullopt, std::nullopt, -2);  // negative strides
    Tensor back = bp::from_dlpack(bp::to_dlpack_versioned(view));
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.shape(), view.shape());
    EXPECT_EQ(back.strides(), view.strides());
    EXPECT_EQ(back.data(), view.data()) << bp::dtype_name(dtype);
    Tensor legacy = bp::from_dlpack(bp::to_dlpack(view));
    EXPECT_EQ(legacy.data(), view.data());
    const Tensor got = back.to(DType::f64).contiguous();
    const Tensor want = view.to(DType::f64).contiguous();
    EXPECT_EQ(std::vector<double>(got.data_ptr<double>(), got.data_ptr<double>() + 4),
              std::vector<double>(want.data_ptr<double>(), want.data_ptr<double>() + 4));
  }
}

// A producer of our own, to watch the deleter.
struct Foreign {
  std::vector<int32_t> data{10, 11, 12, 13, 14, 15};
  int64_t shape[2] = {3, 2};
  int64_t strides[2] = {1, 3};  // column-major
  int deleted = 0;
};

DLManagedTensorVersioned make_foreign(Foreign& f, uint64_t flags) {
  DLManagedTensorVersioned m{};
  m.version = {1, 0};
  m.manager_ctx = &f;
  m.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Foreign*>(self->manager_ctx)->deleted; };
  m.flags = flags;
  m.dl_tensor = DLTensor{f.data.data(), {kBpDLCPU, 0}, 2, {kBpDLInt, 32, 1}, f.shape, f.strides, 0};
  return m;
}

TEST(DLPackImport, WrapsForeignMemoryAndCallsTheDeleterOnce) {
  Foreign f;
  DLManagedTensorVersioned m = make_foreign(f, 0);
  {
    Tensor t = bp::from_dlpack(&m);
    EXPECT_EQ(t.data(), f.data.data());
    Tensor row = t.select(0, 2);  // a second view of the same storage
    t = Tensor();
    EXPECT_EQ(f.deleted, 0);
    EXPECT_EQ(row.data_ptr<int32_t>()[0], 12);
    EXPECT_EQ(row.data_ptr<int32_t>()[row.stride(0)], 15);
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST(DLPackImport, ReadOnlyFlagIsKept) {
  Foreign f;
  DLManagedTensorVersioned m = make_foreign(f, kBpDLPackFlagReadOnly);
  Tensor t = bp::from_dlpack(&m);
  EXPECT_TRUE(t.storage()->read_only());
  expect_error([&] { t.copy_from(t.to(DType::i64)); }, ErrorKind::Runtime, {"read-only"});
  DLManagedTensorVersioned* again = bp::to_dlpack_versioned(t);
  EXPECT_EQ(again->flags & kBpDLPackFlagReadOnly, kBpDLPackFlagReadOnly);
  again->deleter(again);
}

TEST(DLPackImport, NullStridesAndByteOffset) {
  Foreign f;
  DLManagedTensor m{};
  m.dl_tensor = DLTensor{f.data.data(), {kBpDLCPU, 0}, 1, {kBpDLInt, 32, 1}, f.shape, nullptr, 8};
  m.manager_ctx = &f;
  m.deleter = [](DLManagedTensor* self) { ++static_cast<Foreign*>(self->manager_ctx)->deleted; };
  {
    Tensor t = bp::from_dlpack(&m);
    EXPECT_EQ(t.strides(), Shape{1});
    EXPECT_EQ(t.data_ptr<int32_t>()[0], 12);
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST(DLPackImport, RejectsWhatItCannotHoldAndLeavesOwnership) {
  Foreign f;
  DLManagedTensorVersioned m = make_foreign(f, 0);
  m.dl_tensor.dtype = {kBpDLUInt, 8, 1};
  expect_error([&] { bp::from_dlpack(&m); }, ErrorKind::Value, {"from_dlpack", "code 1, bits 8", "bfloat16"});
  m.dl_tensor.dtype = {kBpDLFloat, 32, 4};
  expect_error([&] { bp::from_dlpack(&m); }, ErrorKind::Value, {"lanes 4"});
  m.dl_tensor.dtype = {kBpDLUInt, 16, 1};
  expect_error([&] { bp::from_dlpack(&m); }, ErrorKind::Value, {"bits 16"});
  EXPECT_EQ(bp::from_dlpack(&m, {.uint16_as_bf16 = true}).dtype(), DType::bf16);
  m.dl_tensor.dtype = {kBpDLInt, 32, 1};
  m.dl_tensor.device = {7, 0};  // Vulkan
  expect_error([&] { bp::from_dlpack(&m); }, ErrorKind::Value, {"device type 7", "kDLCUDA"});
  m.dl_tensor.device = {kBpDLCPU, 0};
  m.version = {2, 0};
  expect_error([&] { bp::from_dlpack(&m); }, ErrorKind::Value, {"version 2.0", "major version 1"});
  EXPECT_EQ(f.deleted, 1);  // only the one successful import above
}

// Note [Misaligned DLPack data]: data not aligned to its elements is copied
// to aligned memory (kernels load whole elements), and the producer is
// released at once.
TEST(DLPackImport, MisalignedDataIsCopiedAndReleased) {
  alignas(8) unsigned char bytes[1 + 6 * sizeof(int32_t)] = {};
  const int32_t values[6] = {10, 11, 12, 13, 14, 15};
  std::memcpy(bytes + 1, values, sizeof values);
  Foreign f;
  DLManagedTensorVersioned m = make_foreign(f, 0);
  m.dl_tensor.data = bytes;
  m.dl_tensor.byte_offset = 1;
  Tensor t = bp::from_dlpack(&m);
  EXPECT_EQ(f.deleted, 1);  // nothing of the producer's is kept
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % alignof(int32_t), 0u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  // Column-major strides {1, 3}: element (r, c) is values[r + 3c].
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 2; ++c) EXPECT_EQ(t.data_ptr<int32_t>()[r * 2 + c], values[r + 3 * c]);
  // On a device it cannot be copied here: refused, ownership left.
  Foreign g;
  DLManagedTensorVersioned d = make_foreign(g, 0);
  d.dl_tensor.data = bytes;
  d.dl_tensor.byte_offset = 2;
  d.dl_tensor.device = {kBpDLCUDA, 0};
  expect_error([&] { bp::from_dlpack(&d); }, ErrorKind::Value, {"from_dlpack", "aligned to its 4-byte elements"});
  EXPECT_EQ(g.deleted, 0);
}

// Note [Checked sizes]: shapes and strides whose sizes overflow int64, and a
// NULL data pointer with elements, are refused instead of wrapping.
TEST(DLPackImport, SizesThatOverflowAreRefused) {
  Foreign f;
  DLManagedTensorVersioned m = make_foreign(f, 0);
  int64_t huge[2] = {int64_t{1} << 62, 4};
  m.dl_tensor.shape = huge;
  m.dl_tensor.strides = nullptr;
  expect_error([&] { bp::from_dlpack(&m); }, ErrorKind::Value, {"from_dlpack", "2^63"});
  int64_t shape[2] = {3, 2};
  int64_t strides[2] = {int64_t{1} << 62, 1};
  m.dl_tensor.shape = shape;
  m.dl_tensor.strides = strides;
  expect_error([&] { bp::from_dlpack(&m); }, ErrorKind::Value, {"from_dlpack", "2^63"});
  m.dl_tensor.strides = nullptr;
  m.dl_tensor.data = nullptr;
  expect_error([&] { bp::from_dlpack(&m); }, ErrorKind::Value, {"from_dlpack", "NULL data pointer"});
  EXPECT_EQ(f.deleted, 0);
}

TEST(DLPackAbi, LayoutMatchesThePublishedStructs) {
  // The static_asserts in dlpack_abi.h pin the offsets; here, the sizes of
  // the managed structs, which consumers allocate and free on their side.
  EXPECT_EQ(sizeof(DLManagedTensor), 64u);
  EXPECT_EQ(sizeof(DLManagedTensorVersioned), 80u);
}

}  // namespace
