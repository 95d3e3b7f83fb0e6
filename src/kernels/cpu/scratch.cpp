// Per-thread reusable kernel scratch (Note [Kernel scratch] in scratch.h).

#include "kernels/cpu/scratch.h"

#include <array>

#include "backplane/tensor.h"

namespace bp::kernels::cpu {

float* scratch(ScratchSlot slot, std::size_t floats) {
  struct Slot {
    StoragePtr block;
    std::size_t floats = 0;
  };
  thread_local std::array<Slot, static_cast<std::size_t>(ScratchSlot::count)> slots;
  Slot& s = slots[static_cast<std::size_t>(slot)];
  if (s.floats < floats) {
    s.block.reset();  // free the old block first: the peak is one block, not two
    s.block = allocate_storage(Device::cpu(), floats * sizeof(float));
    s.floats = floats;
  }
  return static_cast<float*>(s.block->data());
}

float* bounded_scratch(ScratchSlot slot, std::size_t floats, StoragePtr& owned) {
  if (floats * sizeof(float) <= kScratchKeepBytes) return scratch(slot, floats);
  owned = allocate_storage(Device::cpu(), floats * sizeof(float));
  return static_cast<float*>(owned->data());
}

}  // namespace bp::kernels::cpu
