// torch.backends.openmp: what the compiler's OpenMP gives (compile-time _OPENMP).

#include "backplane/backends/openmp.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bp::backends::openmp {

bool is_available() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

std::string version() {
#ifdef _OPENMP
  // _OPENMP is the release date (yyyymm) of the specification implemented.
  switch (_OPENMP) {
    case 200505: return "2.5";
    case 200805: return "3.0";
    case 201107: return "3.1";
    case 201307: return "4.0";
    case 201511: return "4.5";
    case 201811: return "5.0";
    case 202011: return "5.1";
    case 202111: return "5.2";
    default: return std::to_string(_OPENMP);
  }
#else
  return {};
#endif
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace bp::backends::openmp
