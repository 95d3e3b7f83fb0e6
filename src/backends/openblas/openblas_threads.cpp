// Connects OpenBLAS's thread count to bp::set_num_threads (Note [One thread
// count] in core/threads.h). This folder is compiled only when OpenBLAS is
// found, so the core stays free of it.

#include <cblas.h>

#include "core/threads.h"

namespace {

void set_openblas_threads(int n) { openblas_set_num_threads(n); }

// Registered when libbackplane loads.
[[maybe_unused]] const bool registered = [] {
  bp::threads::register_hook("openblas", &set_openblas_threads);
  return true;
}();

}  // namespace
