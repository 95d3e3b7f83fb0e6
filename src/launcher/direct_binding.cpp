#include "launcher/direct_binding.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace bp::launcher {
namespace {

constexpr int kBitsPerWord = sizeof(unsigned long) * CHAR_BIT;
constexpr int kMpolBind = 2;  // MPOL_BIND from <linux/mempolicy.h>, spelled out to avoid libnuma

std::vector<unsigned long> bit_mask(const std::vector<int>& ids) {
  if (ids.empty()) return {};
  int top = *std::max_element(ids.begin(), ids.end());
  std::vector<unsigned long> mask(top / kBitsPerWord + 1, 0);
  for (int id : ids) mask[id / kBitsPerWord] |= 1UL << (id % kBitsPerWord);
  return mask;
}

}  // namespace

DirectBinding prepare_direct_binding(const std::vector<int>& cpus, const std::vector<int>& nodes) {
  return {bit_mask(cpus), bit_mask(nodes)};
}

const char* apply_direct_binding(const DirectBinding& binding) noexcept {
  if (!binding.cpu_mask.empty() &&
      sched_setaffinity(0, binding.cpu_mask.size() * sizeof(unsigned long),
                        reinterpret_cast<const cpu_set_t*>(binding.cpu_mask.data())) != 0)
    return "sched_setaffinity";
  // The kernel reads maxnode - 1 bits of the node mask.
  if (!binding.node_mask.empty() &&
      syscall(SYS_set_mempolicy, kMpolBind, binding.node_mask.data(),
              binding.node_mask.size() * kBitsPerWord + 1) != 0)
    return "set_mempolicy";
  return nullptr;
}

}  // namespace bp::launcher
