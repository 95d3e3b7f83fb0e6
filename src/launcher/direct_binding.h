#pragma once
// Binding without numactl or taskset: the child sets its own CPU affinity
// (sched_setaffinity) and memory policy (set_mempolicy, MPOL_BIND) between
// fork and exec, which is what numactl does before it execs the program.
// The masks are built before fork, so the child only makes two system
// calls (nothing that allocates or locks after fork).

#include <vector>

namespace bp::launcher {

struct DirectBinding {
  std::vector<unsigned long> cpu_mask;   // a cpu_set_t-compatible bit mask; empty: leave CPUs
  std::vector<unsigned long> node_mask;  // empty: leave the memory policy
};

DirectBinding prepare_direct_binding(const std::vector<int>& cpus, const std::vector<int>& nodes);

// Applies the binding to the calling process. Async-signal-safe. Returns
// nullptr on success, else the name of the failing call (errno is set).
const char* apply_direct_binding(const DirectBinding& binding) noexcept;

}  // namespace bp::launcher
