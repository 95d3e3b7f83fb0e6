// winograd:f4x3's transformed weights in backends.cpu.conv_weight_cache:
// Note [Winograd weight cache] in winograd_weight_cache.h.

#include "ops/conv/winograd_weight_cache.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

#include "backplane/backends/conv_weight_cache.h"
#include "ops/conv/impls.h"

namespace bp::ops::conv {

struct WinogradWeight {
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> source;  // the fp32 weight U was made from, [K][C][3][3]
  std::unique_ptr<float, Free> u;       // [36][Cp][Kp]
};

const float* transformed(const WinogradWeight& weight) { return weight.u.get(); }

namespace {

// The entry's key: which tensor (address, dtype, layout) and which kernels.
std::string key_of(const Params& p, kernels::cpu::ConvIsa isa) {
  int64_t words[4 + 2 * 5];
  int n = 0;
  words[n++] = static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(p.w.data()));
  words[n++] = static_cast<int64_t>(p.w.dtype());
  words[n++] = static_cast<int64_t>(isa);
  words[n++] = p.w.ndim();
  for (int64_t d = 0; d < p.w.ndim() && d < 5; ++d) words[n++] = p.w.size(d), words[n++] = p.w.stride(d);
  return std::string(reinterpret_cast<const char*>(words), static_cast<std::size_t>(n) * sizeof(int64_t));
}

// Memory for `floats` floats, on huge pages where the kernel gives them
// (transparent huge pages in "madvise" mode, Linux's default): an entry is
// tens of MiB written once, and faulting it in 4 KiB pages cost more than
// the transform itself (8x512x7x7, one thread: a first call took 22.9 ms
// against 9.6 ms uncached; on huge pages 10.6 ms, and later calls 4.4 ms).
float* entry_memory(std::size_t floats) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t bytes = floats * sizeof(float);
  const std::size_t align = bytes >= kHuge ? kHuge : 64;
  void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
  if (p == nullptr) throw_runtime("conv", "conv: out of memory for a " + std::to_string(bytes) + "-byte Winograd weight");
#ifdef MADV_HUGEPAGE
  if (align == kHuge) (void)madvise(p, (bytes + align - 1) / align * align, MADV_HUGEPAGE);  // advice only
#endif
  return static_cast<float*>(p);
}

// What an entry for shape's weight holds: the fp32 copy and U.
int64_t entry_bytes(kernels::cpu::ConvIsa isa, const kernels::cpu::ConvShape& shape) {
  return (shape.k * shape.c * 9 + kernels::cpu::winograd_weight_floats(isa, shape)) * int64_t{sizeof(float)};
}

// Whether the cache would keep an entry of `bytes`: caching on, and the
// entry within the byte bound (too large, it would be used but not kept).
bool cache_keeps(const backends::cpu::ConvWeightCache& cache, int64_t bytes) {
  return cache.max_size() != 0 && (cache.max_bytes() == 0 || bytes <= cache.max_bytes());
}

std::string size_text(int64_t bytes) {
  char buf[32];
  if (bytes < (1 << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / (1 << 10));
  else std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

bool winograd_weight_kept(int64_t c_in, int64_t c_out) {
  // The widest variant this CPU has pads channels the most, so its entry
  // bounds the one of whichever variant the capability cap leaves.
  using kernels::cpu::ConvIsa;
  const ConvIsa widest = kernels::cpu::conv_isa_supported(ConvIsa::avx512) ? ConvIsa::avx512
                         : kernels::cpu::conv_isa_supported(ConvIsa::avx2) ? ConvIsa::avx2
                                                                            : ConvIsa::generic;
  kernels::cpu::ConvShape shape{};
  shape.c = c_in;
  shape.k = c_out;
  return cache_keeps(backends::cpu::conv_weight_cache(), entry_bytes(widest, shape));
}

std::string winograd_weight_note(const Params& p, kernels::cpu::ConvIsa isa) {
  if (!p.device.is_cpu() || p.transposed || p.groups != 1 || p.spatial != 2 || p.kernel[1] != 3 || p.kernel[2] != 3)
    return "";
  const auto& cache = backends::cpu::conv_weight_cache();
  const kernels::cpu::ConvShape shape = kernel_shape(p);
  const int64_t bytes = entry_bytes(isa, shape);
  if (cache.max_size() == 0)
    return "winograd:f4x3: cpu.conv_weight_cache.max_size = 0: every call transforms the weight (36 x C x K)";
  if (cache.max_bytes() > 0 && bytes > cache.max_bytes())
    return "winograd:f4x3: the weight's transform (" + size_text(bytes) + ") is over cpu.conv_weight_cache.max_bytes (" +
           size_text(cache.max_bytes()) + "): every call transforms it";
  if (cache.peek(key_of(p, isa)))
    return "winograd:f4x3: cpu.conv_weight_cache holds this weight's transform (" + size_text(bytes) +
           "); a call compares the weight's values with the copy it was made from";
  return "winograd:f4x3: the first call transforms this weight and keeps it in cpu.conv_weight_cache (" + size_text(bytes) +
         ")";
}

std::shared_ptr<const WinogradWeight> winograd_weight(const Params& p, kernels::cpu::ConvIsa isa,
                                                      const kernels::cpu::ConvShape& shape, const float* w) {
  auto& cache = backends::cpu::conv_weight_cache();
  const auto values = static_cast<std::size_t>(shape.k * shape.c * 9);
  const auto u_floats = static_cast<std::size_t>(kernels::cpu::winograd_weight_floats(isa, shape));
  const int64_t bytes = entry_bytes(isa, shape);
  if (!cache_keeps(cache, bytes)) return nullptr;
  const std::string key = key_of(p, isa);
  auto make = [&]() -> backends::cpu::ConvWeightCache::Made {
    auto entry = std::make_shared<WinogradWeight>();
    entry->source.reset(entry_memory(values));
    std::memcpy(entry->source.get(), w, values * sizeof(float));
    entry->u.reset(entry_memory(u_floats));
    kernels::cpu::winograd_transform_weight_f32(isa, shape, w, entry->u.get());
    return {std::static_pointer_cast<void>(entry), bytes};
  };
  bool cached = false;
  auto entry = std::static_pointer_cast<const WinogradWeight>(cache.get_or_create_sized(key, make, &cached));
  if (cached && std::memcmp(entry->source.get(), w, values * sizeof(float)) != 0) {
    // Changed in place, or another weight at this address: transform again.
    cache.erase(key);
    entry = std::static_pointer_cast<const WinogradWeight>(cache.get_or_create_sized(key, make));
  }
  return entry;
}

}  // namespace bp::ops::conv
