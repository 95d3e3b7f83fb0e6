#pragma once
// The autotune cache's key and its internal interface (Note [Autotune key]
// in backplane/dispatch.h). Fixed-size and allocation-free, so a warm-cache
// selection costs a hash and one locked map lookup.

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "backplane/dispatch.h"

namespace bp::dispatch::detail {

inline constexpr int kMaxKeyFlags = 32;

struct Key {
  const Op* op = nullptr;
  Device device;
  DType dtype = DType::f32;
  uint32_t layout = 0;
  int threads = 1;  // bp::get_num_threads(): the fastest implementation depends on it
  int ndims = 0;
  // Only the first ndims / nflags entries are meaningful (compared, hashed,
  // saved); the rest stay uninitialised, so making a key costs no memset of
  // its ~400 bytes on every autotuned selection.
  int64_t dims[Problem::kMaxDims];
  uint64_t allowed = ~0ull;  // the implementations(...) restriction in force
  int nflags = 0;
  int64_t flag_values[kMaxKeyFlags];
  // Null for dispatch's winners; the implementation whose own tuned detail
  // the entry holds otherwise (Note [Tuned details] in backplane/dispatch.h).
  const Implementation* owner = nullptr;

  bool operator==(const Key& o) const {
    return op == o.op && owner == o.owner && device == o.device && dtype == o.dtype && layout == o.layout &&
           threads == o.threads &&
           ndims == o.ndims &&
           allowed == o.allowed && nflags == o.nflags &&
           std::memcmp(dims, o.dims, sizeof(int64_t) * ndims) == 0 &&
           std::memcmp(flag_values, o.flag_values, sizeof(int64_t) * nflags) == 0;
  }
};

struct KeyHash {
  std::size_t operator()(const Key& k) const;
};

Key make_key(const Op& op, const Problem& problem, uint64_t allowed);

// The cached winner for `key`, or nullptr. Also resolves entries loaded from
// a file for this op (they wait until their op is defined).
const Implementation* cache_lookup(const Key& key);
void cache_store(const Key& key, const Implementation& winner, double time_ms);
// The tuned detail stored for `key` (whose owner is set), or nullopt.
std::optional<std::string> cache_lookup_detail(const Key& key);
void cache_store_detail(const Key& key, const std::string& detail, double time_ms);
// Drops every entry of `op` for problems on `device` (its list changed).
void forget_op(const Op& op, DeviceType device);

}  // namespace bp::dispatch::detail
