#pragma once
// torch.backends.openmp: whether Backplane was compiled with OpenMP.

#include <string>

namespace bp::backends::openmp {

// Built with OpenMP (compile-time _OPENMP).
bool is_available();
// The OpenMP specification version the compiler implements ("4.5"); "" when not built.
std::string version();
// omp_get_max_threads(); 1 when not built.
int max_threads();

}  // namespace bp::backends::openmp
