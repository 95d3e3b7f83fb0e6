#pragma once
// A bounded least-recently-used cache of costly-to-make plans (cuFFT plans,
// FFTW plans), shared by every op that makes them.
//
// Semantics (spec 4.4, cufft_plan_cache): keyed by the full problem
// description; a hit moves the entry to the front; a miss at capacity evicts
// the least recently used entry; shrinking max_size evicts at once;
// max_size == 0 disables caching (every call makes a temporary plan);
// a negative max_size is an error. Thread-safe.
//
// Backplane's additions: each plan may carry its size in bytes (a cuFFT
// work area, FFTW's tables as measured while planning), `bytes()` is their
// sum, reported by memory_stats() as plan_bytes of the cache's device, and
// `max_bytes` (0: no bound) evicts least recently used plans until the sum
// fits (a plan larger than the bound alone is used but not kept).
//
// Note [Plan cache slots]
// A caller that calls with the same key again and again (an op in a loop)
// may keep a Slot: where get_or_create_sized() left its plan in the cache,
// stamped with the count of removals so far. hit(slot) then finds the plan
// without building or hashing the key, and still counts a hit and moves the
// entry to the front, so the LRU order and the counts are those of a
// lookup. Any removal (eviction, clear(), a shrinking bound) bumps the count
// and so turns every outstanding slot stale: hit() answers nullptr and the
// caller looks the key up again. A slot is the caller's own (one thread's),
// and says nothing about which key it was for: the caller compares keys.

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backplane/device.h"
#include "backplane/error.h"

namespace bp {

// The control surface every cache exposes (Python: .size, .max_size, .clear()).
class PlanCacheBase {
 public:
  PlanCacheBase(std::string name, int64_t max_size, Device device = Device::cpu())
      : name_(std::move(name)), max_size_(max_size), device_(device) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    registry().push_back(this);
  }
  virtual ~PlanCacheBase() {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto& r = registry();
    for (auto it = r.begin(); it != r.end(); ++it)
      if (*it == this) {
        r.erase(it);
        break;
      }
  }
  PlanCacheBase(const PlanCacheBase&) = delete;
  PlanCacheBase& operator=(const PlanCacheBase&) = delete;

  const std::string& name() const { return name_; }
  Device device() const { return device_; }
  int64_t max_size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_size_;
  }
  void set_max_size(int64_t n) {
    if (n < 0) {
      throw Error(ErrorKind::Runtime, name_ + " size must be non-negative, but got " + std::to_string(n), name_ + ".max_size",
                  std::to_string(n), "an integer >= 0");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    max_size_ = n;
    evict_to(static_cast<size_t>(n), 0);
  }
  // The byte bound (0: none); shrinking evicts at once. Negative: RuntimeError.
  int64_t max_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_bytes_;
  }
  void set_max_bytes(int64_t n) {
    if (n < 0) {
      throw Error(ErrorKind::Runtime, name_ + " byte bound must be non-negative, but got " + std::to_string(n),
                  name_ + ".max_bytes", std::to_string(n), "an integer >= 0 (0: no bound)");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    max_bytes_ = n;
    evict_to(static_cast<size_t>(max_size_), 0);
  }
  virtual size_t size() const = 0;
  virtual void clear() = 0;
  // The bytes of the cached plans.
  int64_t bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }
  uint64_t hits() const { return hits_.load(); }
  // Entries removed so far (evictions and clears): Note [Plan cache slots].
  uint64_t removals() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return removals_;
  }
  uint64_t misses() const { return misses_.load(); }

  // plan_bytes of memory_stats(): the sum over the caches of `device`.
  static int64_t bytes_on(Device device) {
    std::lock_guard<std::mutex> lock(registry_mutex());
    int64_t total = 0;
    for (const PlanCacheBase* c : registry())
      if (c->device_ == device) total += c->bytes();
    return total;
  }

 protected:
  // Drops least-recently-used entries until at most n remain and, with a
  // byte bound, their bytes plus `reserve` fit it; mutex_ held. Lock order:
  // a plan's deleter (run here) may take the library's own lock (FFTW's
  // planner), which is never held while a cache is entered.
  virtual void evict_to(size_t n, int64_t reserve) = 0;

  std::string name_;
  int64_t max_size_;
  int64_t max_bytes_ = 0;
  int64_t bytes_ = 0;
  uint64_t removals_ = 0;  // Note [Plan cache slots]
  Device device_;
  mutable std::mutex mutex_;
  std::atomic<uint64_t> hits_{0}, misses_{0};

 private:
  // Leaked: caches that live in statics may unregister after static destruction.
  static std::vector<PlanCacheBase*>& registry() {
    static auto* r = new std::vector<PlanCacheBase*>;
    return *r;
  }
  static std::mutex& registry_mutex() {
    static auto* m = new std::mutex;
    return *m;
  }
};

template <class Key, class Plan, class Hash = std::hash<Key>>
class PlanCache final : public PlanCacheBase {
  struct Entry {
    Key key;
    std::shared_ptr<Plan> plan;
    int64_t bytes;
  };

 public:
  using PlanPtr = std::shared_ptr<Plan>;
  using PlanCacheBase::PlanCacheBase;
  ~PlanCache() override = default;

  // Where a plan sits in the cache (Note [Plan cache slots]); default: stale.
  struct Slot {
    typename std::list<Entry>::iterator entry{};
    uint64_t removals = ~uint64_t{0};
  };

  // A made plan and its size in bytes (0 when unknown).
  struct Made {
    PlanPtr plan;
    int64_t bytes = 0;
  };

  // The cached plan for key, or make() one (cached unless max_size is 0).
  // make() runs outside the lock: plan creation is slow. The _sized form
  // takes the plan's bytes too; `was_cached`, when given, says which happened.
  PlanPtr get_or_create(const Key& key, const std::function<PlanPtr()>& make) {
    return get_or_create_sized(key, [&] { return Made{make(), 0}; });
  }
  // `slot`, when given, is set to where the plan now sits (left stale when
  // it was not kept): Note [Plan cache slots].
  PlanPtr get_or_create_sized(const Key& key, const std::function<Made()>& make, bool* was_cached = nullptr,
                              Slot* slot = nullptr) {
    if (slot) *slot = Slot{};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        ++hits_;
        if (it->second != lru_.begin()) lru_.splice(lru_.begin(), lru_, it->second);
        if (was_cached) *was_cached = true;
        if (slot) *slot = Slot{it->second, removals_};
        return it->second->plan;
      }
      ++misses_;
    }
    if (was_cached) *was_cached = false;
    Made made = make();
    std::lock_guard<std::mutex> lock(mutex_);
    if (max_size_ == 0) return made.plan;
    if (max_bytes_ > 0 && made.bytes > max_bytes_) return made.plan;  // too large to keep
    auto it = index_.find(key);
    if (it != index_.end()) {  // another thread made it first
      if (slot) *slot = Slot{it->second, removals_};
      return it->second->plan;
    }
    evict_to(static_cast<size_t>(max_size_ - 1), made.bytes);
    lru_.push_front(Entry{key, made.plan, made.bytes});
    index_[key] = lru_.begin();
    bytes_ += made.bytes;
    if (slot) *slot = Slot{lru_.begin(), removals_};
    return made.plan;
  }

  // The plan at `slot` as a hit (counted, moved to the front), or nullptr
  // when something was removed since the slot was filled: Note [Plan cache slots].
  PlanPtr hit(const Slot& slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (slot.removals != removals_) return nullptr;
    ++hits_;
    if (slot.entry != lru_.begin()) lru_.splice(lru_.begin(), lru_, slot.entry);
    return slot.entry->plan;
  }

  // The cached plan for `key` or nullptr, without touching the order or the
  // counts (explain asks this).
  PlanPtr peek(const Key& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : it->second->plan;
  }

  // Drops the entry for `key`, if there is one (a caller that found it
  // stale: the conv weight cache when a weight's values changed).
  void erase(const Key& key) {
    std::shared_ptr<Plan> gone;  // released after the lock (a plan's deleter may take other locks)
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return;
    gone = std::move(it->second->plan);
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
    ++removals_;
  }

  size_t size() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return lru_.size();
  }
  void clear() override {
    std::list<Entry> gone;  // destroyed after the lock is released (a plan's deleter may take other locks)
    std::lock_guard<std::mutex> lock(mutex_);
    gone.swap(lru_);
    index_.clear();
    bytes_ = 0;
    ++removals_;
  }

 private:
  void evict_to(size_t n, int64_t reserve) override {
    while (!lru_.empty() && (lru_.size() > n || (max_bytes_ > 0 && bytes_ + reserve > max_bytes_))) {
      index_.erase(lru_.back().key);
      bytes_ -= lru_.back().bytes;
      lru_.pop_back();
      ++removals_;
    }
  }

  std::list<Entry> lru_;
  std::unordered_map<Key, typename std::list<Entry>::iterator, Hash> index_;
};

}  // namespace bp
