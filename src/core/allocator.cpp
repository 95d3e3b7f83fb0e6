// Backplane's allocator: 64-byte aligned host memory, CUDA memory through
// backplane_cuda, and per-device byte counts for memory_stats().

#include "core/allocator.h"
#include "core/host_block_cache.h"
#include "core/recycled.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

#include "backends/cuda/cuda_loader.h"
#include "backplane/error.h"
#include "backplane/plan_cache.h"
#include "backplane/runtime.h"
#include "backplane/tensor.h"

namespace bp {
namespace {

// A cache line, and the widest vector register (AVX-512): aligned kernels
// never split a load across lines.
constexpr std::size_t kCpuAlignment = 64;

// Host byte counts are two atomics: every tensor, workspace and staging
// buffer of every op passes here, and a mutex plus a map lookup per
// allocation and per free was a visible part of a small op's call (a cached
// 4096-point FFT makes about a dozen). Device counts keep the locked table.
struct HostCounters {
  std::atomic<int64_t> current{0}, peak{0};
};
struct StatsTable {
  HostCounters host;
  std::mutex mutex;
  std::map<Device, MemoryStats> by_device;  // CUDA devices
};
StatsTable& stats_table() {
  // Leaked on purpose: storages freed during static destruction (a tensor
  // held by a global) still find their table.
  static StatsTable* table = new StatsTable;
  return *table;
}

void record_alloc(Device device, std::size_t nbytes) {
  StatsTable& t = stats_table();
  const auto n = static_cast<int64_t>(nbytes);
  if (device.is_cpu()) {
    const int64_t now = t.host.current.fetch_add(n, std::memory_order_relaxed) + n;
    int64_t peak = t.host.peak.load(std::memory_order_relaxed);
    while (now > peak && !t.host.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return;
  }
  std::lock_guard<std::mutex> lock(t.mutex);
  MemoryStats& s = t.by_device[device];
  s.current_bytes += n;
  if (s.current_bytes > s.peak_bytes) s.peak_bytes = s.current_bytes;
}

void record_free(Device device, std::size_t nbytes) {
  StatsTable& t = stats_table();
  if (device.is_cpu()) {
    t.host.current.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
    return;
  }
  std::lock_guard<std::mutex> lock(t.mutex);
  t.by_device[device].current_bytes -= static_cast<int64_t>(nbytes);
}

MemoryStats host_stats(const StatsTable& t) {
  MemoryStats s;
  s.current_bytes = t.host.current.load(std::memory_order_relaxed);
  s.peak_bytes = std::max(t.host.peak.load(std::memory_order_relaxed), s.current_bytes);
  return s;
}

std::string cuda_error_text(const char* buffer) {
  return buffer[0] != '\0' ? std::string(buffer) : std::string("unknown CUDA error");
}

// The block size allocate_cpu() asks for: aligned_alloc wants a multiple of
// the alignment; a zero-byte tensor still gets a real (unique, non-null)
// address, which DLPack consumers expect.
std::size_t cpu_block_bytes(std::size_t nbytes) {
  const std::size_t rounded = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  return rounded == 0 ? kCpuAlignment : rounded;
}

StoragePtr allocate_cpu(std::size_t nbytes) {
  const std::size_t rounded = cpu_block_bytes(nbytes);
  void* p = host_cache::take(rounded);  // Note [Host block cache]
  if (p == nullptr) p = std::aligned_alloc(kCpuAlignment, rounded);
  if (p == nullptr) {
    throw_runtime("allocate", "out of host memory allocating " + std::to_string(nbytes) + " bytes");
  }
  record_alloc(Device::cpu(), nbytes);
  // Two words captured (the block size is recomputed): the release function
  // fits std::function's own storage, so a storage costs no second heap allocation.
  // The storage's block recycled per thread: Note [Recycled call blocks].
  return detail::make_recycled<Storage>(p, nbytes, Device::cpu(), [p, nbytes] {
    host_cache::give(p, cpu_block_bytes(nbytes));
    record_free(Device::cpu(), nbytes);
  });
}

StoragePtr allocate_cuda(Device device, std::size_t nbytes) {
  const BpCudaApi& api = alloc::require_cuda(device, "allocate");
  void* p = nullptr;
  char err[512] = {};
  // cudaMalloc(0) returns a null pointer; one byte keeps addresses unique.
  if (api.malloc_device(device.index, nbytes == 0 ? 1 : nbytes, &p, err, sizeof err) != 0) {
    throw_runtime("allocate", "cannot allocate " + std::to_string(nbytes) + " bytes on " + device.str() +
                                  ": " + cuda_error_text(err));
  }
  record_alloc(device, nbytes);
  const BpCudaApi* table = &api;
  return std::make_shared<Storage>(p, nbytes, device, [table, device, p, nbytes] {
    table->free_device(device.index, p);
    record_free(device, nbytes);
  });
}

}  // namespace

namespace alloc {

const BpCudaApi& require_cuda(Device device, const char* op) {
  const std::string where = std::string(op) + " on " + device.str();
  const BpCudaApi* api = cuda::api();
  if (api == nullptr) throw_runtime(op, where + ": CUDA is not available: " + cuda::load_error());
  char err[512] = {};
  const int count = api->device_count(err, sizeof err);
  if (count < 0) throw_runtime(op, where + ": CUDA is not available: " + cuda_error_text(err));
  if (count == 0) throw_runtime(op, where + ": CUDA is not available: no CUDA device");
  if (device.index >= count) {
    throw_runtime(op, where + ": no such device (this machine has " + std::to_string(count) +
                          " CUDA device" + (count == 1 ? "" : "s") + ")");
  }
  return *api;
}

}  // namespace alloc

Storage::Storage(void* data, std::size_t nbytes, Device device, std::function<void()> release,
                 bool read_only)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)), read_only_(read_only) {}

Storage::~Storage() {
  if (release_) release_();
}

StoragePtr allocate_storage(Device device, std::size_t nbytes) {
  return device.is_cpu() ? allocate_cpu(nbytes) : allocate_cuda(device, nbytes);
}

// Plan bytes are read after the table's lock is released: a plan cache
// evicting under its own lock frees memory, which takes the table's lock.
std::vector<std::pair<Device, MemoryStats>> memory_stats() {
  StatsTable& t = stats_table();
  std::vector<std::pair<Device, MemoryStats>> out;
  out.emplace_back(Device::cpu(), host_stats(t));  // cpu first, always
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    for (const auto& [device, stats] : t.by_device) out.emplace_back(device, stats);
  }
  for (auto& [device, stats] : out) {
    stats.plan_bytes = PlanCacheBase::bytes_on(device);
    if (device.is_cpu()) stats.cached_bytes = host_cache::cached_bytes();
  }
  return out;
}

MemoryStats memory_stats(Device device) {
  StatsTable& t = stats_table();
  MemoryStats s;
  if (device.is_cpu()) {
    s = host_stats(t);
  } else {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.by_device.find(device);
    if (it != t.by_device.end()) s = it->second;
  }
  s.plan_bytes = PlanCacheBase::bytes_on(device);
  if (device.is_cpu()) s.cached_bytes = host_cache::cached_bytes();
  return s;
}

int64_t empty_cache() { return host_cache::release_all(); }

void reset_peak_memory_stats() {
  StatsTable& t = stats_table();
  t.host.peak.store(t.host.current.load(std::memory_order_relaxed), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(t.mutex);
  for (auto& [device, stats] : t.by_device) stats.peak_bytes = stats.current_bytes;
}

}  // namespace bp
