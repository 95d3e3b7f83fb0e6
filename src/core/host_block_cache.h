#pragma once
// Internal: freed host blocks kept for the next allocation of the same size.
// Note [Host block cache] in host_block_cache.cpp.

#include <cstddef>
#include <cstdint>

namespace bp::host_cache {

// A cached block of exactly `bytes` (a multiple of the alignment), or nullptr.
void* take(std::size_t bytes);
// Keeps `p` (`bytes` long) for reuse when it fits the bounds; otherwise frees it.
void give(void* p, std::size_t bytes);
// Frees every cached block (empty_cache()); returns how many bytes went back.
int64_t release_all();
// Bytes cached now (memory_stats' cached_bytes).
int64_t cached_bytes();

}  // namespace bp::host_cache
