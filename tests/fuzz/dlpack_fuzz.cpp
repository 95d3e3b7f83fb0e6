// DLPack tensors with odd shapes, strides, byte offsets, dtypes, devices and
// versions, pointing into a buffer of ours. An import either fails with
// bp::Error leaving ownership with the producer (deleter not called) or
// succeeds and calls the deleter exactly once when the last view dies. When
// the claimed elements lie inside the buffer, the tensor is also read
// (contiguous copy, conversion, re-export), which must stay inside it: the
// sanitizers watch every access, misaligned ones included.

#include <cstdint>
#include <cstring>
#include <vector>

#include "backplane/error.h"
#include "backplane/tensor.h"
#include "core/dlpack_abi.h"
#include "fuzz/fuzz_util.h"

namespace {

constexpr std::size_t kBuffer = 4096;
alignas(64) unsigned char g_buffer[kBuffer];
int g_deleted = 0;

// Reads the input as a stream of small fields; zeros once it is used up.
struct Reader {
  const uint8_t* p;
  std::size_t n;
  uint64_t take(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = v << 8 | (n ? (--n, *p++) : 0);
    return v;
  }
  // Mostly small sizes and strides, sometimes extreme ones.
  int64_t dim_value() {
    const uint64_t kind = take(1);
    switch (kind % 8) {
      case 0: return -static_cast<int64_t>(take(1));
      case 1: return static_cast<int64_t>(take(8));
      case 2: return INT64_MAX - static_cast<int64_t>(take(1));
      case 3: return INT64_MIN + static_cast<int64_t>(take(1));
      default: return static_cast<int64_t>(take(1) % 17);
    }
  }
};

// Whether the bytes the view claims lie inside the buffer and it has few
// enough elements to copy (a broadcast view of 2^40 elements fits the
// buffer but not memory), computed apart from the library in 128-bit
// arithmetic with every operand bounded first.
bool inside_buffer(const DLTensor& t, std::size_t itemsize) {
  constexpr __int128 kBig = __int128(1) << 40;
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] < 0) return false;
  for (int d = 0; d < t.ndim; ++d)
    if (t.shape[d] == 0) return true;  // nothing to read
  __int128 lo = 0, hi = 0, dense = 1, numel = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    const __int128 n = t.shape[d];
    if (n > kBig) return false;
    const __int128 s = t.strides ? t.strides[d] : dense;
    if (n > 1) {
      if (s > kBig || s < -kBig) return false;
      ((n - 1) * s < 0 ? lo : hi) += (n - 1) * s;
    }
    dense *= n;
    numel *= n;
    if (dense > kBig || numel > (1 << 16)) return false;
  }
  const __int128 start = static_cast<__int128>(static_cast<unsigned char*>(t.data) - g_buffer) + t.byte_offset;
  return start + lo * static_cast<__int128>(itemsize) >= 0 &&
         start + (hi + 1) * static_cast<__int128>(itemsize) <= static_cast<__int128>(kBuffer);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  const uint64_t mode = in.take(1);
  const int ndim = static_cast<int>(in.take(1) % 6) - (mode & 0x80 ? 1 : 0);  // -1 now and then
  int64_t shape[6] = {}, strides[6] = {};
  for (int d = 0; d < 6; ++d) shape[d] = in.dim_value();
  for (int d = 0; d < 6; ++d) strides[d] = in.dim_value();
  DLTensor t{};
  t.data = (mode & 0x40) ? nullptr : g_buffer + in.take(1) % 64;
  t.device = {static_cast<int32_t>(in.take(1) % 16), static_cast<int32_t>(in.take(1)) - 2};
  const uint8_t codes[] = {kBpDLInt, kBpDLUInt, kBpDLFloat, kBpDLBfloat, kBpDLComplex, kBpDLBool, 3, 7};
  const uint8_t bits[] = {1, 8, 16, 32, 64, 128, 12, 0};
  t.dtype = {codes[in.take(1) % 8], bits[in.take(1) % 8], static_cast<uint16_t>(in.take(1) % 4 == 0 ? 2 : 1)};
  t.ndim = ndim;
  t.shape = (mode & 0x20) ? nullptr : shape;
  t.strides = (mode & 0x10) ? nullptr : strides;
  t.byte_offset = (mode & 0x08) ? in.take(8) : in.take(1);
  const std::size_t itemsize = std::max<std::size_t>(1, t.dtype.bits / 8) * t.dtype.lanes;

  // Read the data only when the view claims bytes of the buffer; importing
  // alone reads nothing unless the data is misaligned (then it is copied).
  const bool valid_shape = t.ndim >= 0 && (t.ndim == 0 || t.shape != nullptr);
  const bool readable = t.data != nullptr && valid_shape && inside_buffer(t, itemsize) && t.device.device_type == kBpDLCPU;
  const bool aligned = t.data == nullptr || (reinterpret_cast<uintptr_t>(t.data) + t.byte_offset) % 16 == 0;
  if (!readable && !aligned) return 0;  // a producer lying about memory it does not own

  g_deleted = 0;
  // The producer's structs outlive the tensor: its deleter is called with them.
  DLManagedTensorVersioned versioned{};
  versioned.version = {static_cast<uint32_t>(mode & 2 ? 2 : 1), 0};
  versioned.dl_tensor = t;
  versioned.flags = mode & 4 ? kBpDLPackFlagReadOnly : 0;
  versioned.deleter = [](DLManagedTensorVersioned*) { ++g_deleted; };
  DLManagedTensor legacy{};
  legacy.dl_tensor = t;
  legacy.deleter = [](DLManagedTensor*) { ++g_deleted; };
  {
    bp::Tensor out;
    try {
      out = (mode & 1) ? bp::from_dlpack(&versioned, {.uint16_as_bf16 = (mode & 2) != 0}) : bp::from_dlpack(&legacy);
    } catch (const bp::Error&) {
      BP_FUZZ_CHECK(g_deleted == 0);  // a refused import leaves ownership with the producer
      return 0;
    }
    if (readable && out.device().is_cpu()) {
      try {
        const bp::Tensor dense = out.contiguous();
        BP_FUZZ_CHECK(dense.numel() == out.numel() && dense.is_contiguous());
        if (bp::is_floating(out.dtype())) BP_FUZZ_CHECK(out.to(bp::DType::f64).numel() == out.numel());
        DLManagedTensorVersioned* again = bp::to_dlpack_versioned(out);
        again->deleter(again);
      } catch (const bp::Error&) {
      }
    }
  }
  BP_FUZZ_CHECK(g_deleted == 1);  // the last view is gone
  return 0;
}
