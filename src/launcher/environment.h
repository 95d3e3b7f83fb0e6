#pragma once
// The environment each instance gets (spec section 16.4 step 5): preloaded
// allocator and OpenMP runtime (LD_PRELOAD, MALLOC_CONF for jemalloc),
// OMP_NUM_THREADS, KMP_AFFINITY and KMP_BLOCKTIME. A variable the user has
// already set is never overridden: its value is kept, with a warning when it
// differs. A stale LD_PRELOAD entry (no such file) is dropped with a warning,
// since the dynamic loader would complain in every child.

#include <string>
#include <vector>

#include "launcher/core_selection.h"
#include "launcher/host.h"
#include "launcher/options.h"

namespace bp::launcher {

struct EnvVar {
  std::string name;
  std::string value;       // what the child sees
  bool from_user = false;  // kept from the launcher's environment, not set by it
};

// The variables common to every instance: LD_PRELOAD, MALLOC_CONF,
// KMP_AFFINITY, KMP_BLOCKTIME. Throws bp::Error when tcmalloc and jemalloc
// are both requested.
std::vector<EnvVar> common_environment(const LaunchOptions& options, const EnvMap& env,
                                       const Host& host, bool set_kmp_affinity,
                                       Messages& messages);

// OMP_NUM_THREADS for an instance of `ncores` cores, or the user's value.
EnvVar omp_num_threads(int ncores, const EnvMap& env);

// The spec's warning for a preset variable whose value differs from ours.
std::string kept_value_warning(const std::string& name, const std::string& kept,
                               const std::string& ignored);

}  // namespace bp::launcher
