#pragma once
// Process-wide runtime state: thread count, memory statistics, random
// numbers.

#include <array>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "backplane/device.h"

namespace bp {

// ---------------------------------------------------------------- threads
// Sets the number of threads that OpenMP regions, OpenBLAS and oneDNN use:
// 1 <= n <= max_num_threads(), else ValueError. See Note [One thread count]
// in src/core/threads.h for how each library is reached, and Note [Team
// sizes] there for why there is a maximum.
void set_num_threads(int n);
// The value last set, else OpenMP's default at start-up (OMP_NUM_THREADS or
// the number of CPUs), at most max_num_threads().
int get_num_threads();
// The most threads one region may use: 1024, or 4 per hardware thread on
// machines with more than 256 of them.
int max_num_threads();

// ---------------------------------------------------------------- memory
struct MemoryStats {
  int64_t current_bytes = 0;  // bytes Backplane allocated and has not freed
  int64_t peak_bytes = 0;     // highest current_bytes since start or the last reset
  // Bytes held by the plans of the device's plan caches (FFT plans: FFTW's
  // tables as measured while planning, cuFFT work areas), where measurable.
  // A cuFFT work area is allocated through Backplane, so it is counted in
  // current_bytes too.
  int64_t plan_bytes = 0;
  // Freed host blocks kept for reuse by the next allocation of the same size
  // (CPU only; not in current_bytes). empty_cache() returns them to the heap.
  int64_t cached_bytes = 0;
};
// Per device: the CPU first, then each cuda device that has been allocated
// on, in index order. Counts tensors and workspaces (allocate_storage), by
// requested size; memory imported through DLPack is not Backplane's.
std::vector<std::pair<Device, MemoryStats>> memory_stats();
MemoryStats memory_stats(Device device);
// Sets every device's peak to its current value.
void reset_peak_memory_stats();
// Frees the host blocks kept for reuse (memory_stats' cached_bytes); returns
// how many bytes went back to the heap.
int64_t empty_cache();

// ---------------------------------------------------------------- random
// Note [Counter-based random numbers]
// Random numbers come from Philox4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011), a counter-based generator: block b
// of the stream for seed s is philox4x32_10({b_lo, b_hi, 0, 0}, {s_lo, s_hi}),
// four 32-bit numbers. A kernel reserves the blocks it needs from the
// generator (a short critical section) and then computes any element's
// numbers independently, so results depend only on the seed and the order of
// reservations, never on the thread count or scheduling. This is the scheme
// PyTorch's CUDA dropout uses (seed plus offset).

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// A reserved stretch of one generator's stream.
struct PhiloxStream {
  uint64_t seed = 0;
  uint64_t first_block = 0;
  // The i-th 32-bit number of the reservation (block first_block + i / 4).
  uint32_t u32(uint64_t i) const;
  // A float uniform in [0, 1) from the i-th number (its top 24 bits).
  float uniform(uint64_t i) const;
};

class Generator {
 public:
  // PyTorch's default seed, so an unseeded process is still reproducible.
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;

  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}
  // Restarts the stream of `seed` at block 0.
  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  // The next block to be reserved.
  uint64_t offset() const;
  // Reserves enough blocks for `count` 32-bit numbers. Thread-safe.
  PhiloxStream reserve(uint64_t count);

 private:
  mutable std::mutex mutex_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide generator behind dropout.
Generator& default_generator();
// default_generator().manual_seed(seed).
void manual_seed(uint64_t seed);

}  // namespace bp
