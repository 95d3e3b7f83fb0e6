// make_recycled<T>(...): std::make_shared whose block (the object and its
// reference counts, one allocation) is taken from, and given back to, a
// small store of the thread that frees it.
//
// Note [Recycled call blocks]
// Every op call makes a few small shared objects and drops them when it
// returns: its parameter struct and the output's storage. In a loop of calls
// each is a malloc and a free of the same size, about a hundred instructions
// and a few cache lines of the allocator's bins apiece, which for a cached
// 4096-point FFT (4 us) is a visible share of the call. A thread keeps the
// last kSlots blocks freed through here and hands each to the next
// make_recycled of its byte size; any other size, or a block freed while
// every slot is full, goes to the heap as before. Blocks may be freed on
// another thread than the one that made them (they land in that thread's
// store). At thread exit the held blocks are freed; a block freed after that
// (by another thread-local's destructor) goes straight to the heap.

#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace bp::detail {

struct RecycledStore {
  static constexpr int kSlots = 2;  // a call's parameters and its output's storage
  void* block[kSlots] = {};
  std::size_t bytes[kSlots] = {};
  bool closed = false;  // the thread is exiting: no more keeping
};
// Trivially destructible, so it stays readable during thread exit.
inline thread_local RecycledStore t_recycled_store;

// Frees the held blocks at thread exit; constructed when a block is first kept.
struct RecycledStoreReaper {
  ~RecycledStoreReaper() {
    RecycledStore& s = t_recycled_store;
    s.closed = true;
    for (int i = 0; i < RecycledStore::kSlots; ++i) {
      ::operator delete(s.block[i]);
      s.block[i] = nullptr;
    }
  }
};
// One reaper per thread, for every type recycled.
inline void arm_recycled_store_reaper() {
  thread_local RecycledStoreReaper reaper;
  (void)reaper;
}

template <class U>
struct RecyclingAllocator {
  using value_type = U;
  static_assert(alignof(U) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "make_recycled: over-aligned type");

  RecyclingAllocator() = default;
  template <class V>
  RecyclingAllocator(const RecyclingAllocator<V>&) {}  // NOLINT: rebinding, as allocators do

  U* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(U);
    RecycledStore& s = t_recycled_store;
    for (int i = 0; i < RecycledStore::kSlots; ++i)
      if (s.block[i] != nullptr && s.bytes[i] == bytes) {
        void* p = s.block[i];
        s.block[i] = nullptr;
        return static_cast<U*>(p);
      }
    return static_cast<U*>(::operator new(bytes));
  }
  void deallocate(U* p, std::size_t n) {
    RecycledStore& s = t_recycled_store;
    if (!s.closed)
      for (int i = 0; i < RecycledStore::kSlots; ++i)
        if (s.block[i] == nullptr) {
          arm_recycled_store_reaper();  // frees what is kept when the thread ends
          s.block[i] = p;
          s.bytes[i] = n * sizeof(U);
          return;
        }
    ::operator delete(p);
  }
  template <class V>
  bool operator==(const RecyclingAllocator<V>&) const {
    return true;
  }
};

template <class T, class... A>
std::shared_ptr<T> make_recycled(A&&... args) {
  return std::allocate_shared<T>(RecyclingAllocator<T>(), std::forward<A>(args)...);
}

}  // namespace bp::detail
