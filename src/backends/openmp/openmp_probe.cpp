// The "openmp" record: the specification version, the thread count it will
// use and which runtime library the process loaded (libgomp, libomp, ...).

#include <dlfcn.h>

#include "backends/probes.h"
#include "backplane/backends/openmp.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bp::backends::detail {
namespace {

#ifdef _OPENMP
// The file omp_get_max_threads was resolved from: the runtime really in use.
std::string runtime_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&omp_get_max_threads), &info) == 0 || info.dli_fname == nullptr)
    return "unknown";
  std::string path = info.dli_fname;
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
#endif

}  // namespace

BackendInfo probe_openmp() {
#ifdef _OPENMP
  BackendInfo b;
  b.name = "openmp";
  b.built = true;
  b.available = true;
  b.version = openmp::version();
  b.details = {
      {"max threads", std::to_string(openmp::max_threads())},
      {"processors", std::to_string(omp_get_num_procs())},
      {"runtime", runtime_library()},
  };
  return b;
#else
  return not_built("openmp", "the compiler's OpenMP was not found when Backplane was configured");
#endif
}

}  // namespace bp::backends::detail
