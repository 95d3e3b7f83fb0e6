#pragma once
// A bounded least-recently-used cache of costly-to-make plans (cuFFT plans,
// FFTW plans, cuDNN execution plans), shared by every op that makes them.
//
// Semantics (spec 4.4, cufft_plan_cache): keyed by the full problem
// description; a hit moves the entry to the front; a miss at capacity evicts
// the least recently used entry; shrinking max_size evicts at once;
// max_size == 0 disables caching (every call makes a temporary plan);
// a negative max_size is an error. Thread-safe.

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "backplane/error.h"

namespace bp {

// The control surface every cache exposes (Python: .size, .max_size, .clear()).
class PlanCacheBase {
 public:
  explicit PlanCacheBase(std::string name, int64_t max_size) : name_(std::move(name)), max_size_(max_size) {}
  virtual ~PlanCacheBase() = default;

  const std::string& name() const { return name_; }
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
    evict_to(static_cast<size_t>(n));
  }
  virtual size_t size() const = 0;
  virtual void clear() = 0;
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 protected:
  // Drops least-recently-used entries until at most n remain; mutex_ held.
  virtual void evict_to(size_t n) = 0;

  std::string name_;
  int64_t max_size_;
  mutable std::mutex mutex_;
  uint64_t hits_ = 0, misses_ = 0;
};

template <class Key, class Plan, class Hash = std::hash<Key>>
class PlanCache final : public PlanCacheBase {
 public:
  using PlanPtr = std::shared_ptr<Plan>;
  using PlanCacheBase::PlanCacheBase;

  // The cached plan for key, or make() one (cached unless max_size is 0).
  // make() runs outside the lock: plan creation is slow.
  PlanPtr get_or_create(const Key& key, const std::function<PlanPtr()>& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        ++hits_;
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
      ++misses_;
    }
    PlanPtr plan = make();
    std::lock_guard<std::mutex> lock(mutex_);
    if (max_size_ == 0) return plan;
    auto it = index_.find(key);
    if (it != index_.end()) return it->second->second;  // another thread made it first
    evict_to(static_cast<size_t>(max_size_ - 1));
    lru_.emplace_front(key, plan);
    index_[key] = lru_.begin();
    return plan;
  }

  size_t size() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return lru_.size();
  }
  void clear() override {
    std::lock_guard<std::mutex> lock(mutex_);
    lru_.clear();
    index_.clear();
  }

 private:
  void evict_to(size_t n) override {
    while (lru_.size() > n) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  std::list<std::pair<Key, PlanPtr>> lru_;
  std::unordered_map<Key, typename std::list<std::pair<Key, PlanPtr>>::iterator, Hash> index_;
};

}  // namespace bp
