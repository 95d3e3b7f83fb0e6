// Note [Host block cache]
// An op called in a loop allocates its output, and often a workspace, of the
// same sizes every time. glibc's aligned_alloc + free of a 32 KiB block costs
// about 0.5 us (memalign's split and the consolidation on free), which is 10 %
// of a cached 4096-point FFT. So freed host blocks of at most kMaxBlock bytes
// are kept, up to kMaxBlocks blocks and kMaxTotal bytes, and an allocation of
// exactly the same rounded size takes one back. Bounded and small: the cache
// never holds more than kMaxTotal, large blocks go straight back to the heap,
// and backplane.empty_cache() returns everything. memory_stats() counts a
// cached block in cached_bytes, not in current_bytes (which is what tensors
// hold). Under AddressSanitizer the cache is off, so a use after free still
// lands in freed memory that the sanitizer watches.

#include "core/host_block_cache.h"

#include <array>
#include <cstdlib>
#include <atomic>
#include <mutex>
#include <thread>

namespace bp::host_cache {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kEnabled = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kEnabled = false;
#else
constexpr bool kEnabled = true;
#endif
#else
constexpr bool kEnabled = true;
#endif

constexpr std::size_t kMaxBlock = std::size_t{1} << 20;  // 1 MiB
constexpr std::size_t kMaxTotal = std::size_t{8} << 20;  // 8 MiB
constexpr std::size_t kMaxBlocks = 32;

struct Block {
  void* p = nullptr;
  std::size_t bytes = 0;
};

// Every CPU tensor's allocation and free passes through take() and give(),
// whose critical sections scan at most kMaxBlocks slots. Uncontended, this
// lock costs one atomic exchange and a plain store; std::mutex cost two
// atomic read-modify-writes and two calls into libc (a tenth of what a
// cached 4096-point FFT call spent outside FFTW went to allocation).
class SpinLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire))
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

struct Cache {
  SpinLock mutex;
  std::array<Block, kMaxBlocks> blocks{};
  std::size_t count = 0;
  std::size_t total = 0;
};

Cache& cache() {
  // Leaked on purpose, like the stats table: storages freed during static
  // destruction still find it.
  static Cache* c = new Cache;
  return *c;
}

}  // namespace

void* take(std::size_t bytes) {
  if (!kEnabled || bytes > kMaxBlock) return nullptr;
  Cache& c = cache();
  std::lock_guard<SpinLock> lock(c.mutex);
  // The newest block of the size first: it is the likeliest to be in cache.
  for (std::size_t i = c.count; i-- > 0;) {
    if (c.blocks[i].bytes != bytes) continue;
    void* p = c.blocks[i].p;
    c.blocks[i] = c.blocks[--c.count];
    c.blocks[c.count] = Block{};
    c.total -= bytes;
    return p;
  }
  return nullptr;
}

void give(void* p, std::size_t bytes) {
  if (kEnabled && bytes <= kMaxBlock) {
    Cache& c = cache();
    std::lock_guard<SpinLock> lock(c.mutex);
    if (c.count < kMaxBlocks && c.total + bytes <= kMaxTotal) {
      c.blocks[c.count++] = Block{p, bytes};
      c.total += bytes;
      return;
    }
  }
  std::free(p);
}

int64_t release_all() {
  Cache& c = cache();
  std::array<Block, kMaxBlocks> held{};
  std::size_t n = 0;
  int64_t bytes = 0;
  {
    std::lock_guard<SpinLock> lock(c.mutex);
    held = c.blocks;
    n = c.count;
    bytes = static_cast<int64_t>(c.total);
    c.blocks = {};
    c.count = 0;
    c.total = 0;
  }
  for (std::size_t i = 0; i < n; ++i) std::free(held[i].p);
  return bytes;
}

int64_t cached_bytes() {
  Cache& c = cache();
  std::lock_guard<SpinLock> lock(c.mutex);
  return static_cast<int64_t>(c.total);
}

}  // namespace bp::host_cache
