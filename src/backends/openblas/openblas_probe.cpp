// The "openblas" record, from OpenBLAS's own run-time answers: its build
// configuration string, the kernel set (core type) it chose for this CPU and
// its threading model.

#include <cblas.h>

#include <sstream>

#include "backends/probes.h"

namespace bp::backends::detail {
namespace {

const char* threading_name(int parallel) {
  switch (parallel) {
    case 0: return "sequential";
    case 1: return "pthreads";
    case 2: return "openmp";
    default: return "unknown";
  }
}

}  // namespace

BackendInfo probe_openblas() {
  BackendInfo b;
  b.name = "openblas";
  b.built = true;
  b.available = true;
  // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64": the
  // version, then build options and the core type.
  const char* config = openblas_get_config();
  std::istringstream words(config ? config : "");
  std::string word;
  if (words >> word && word == "OpenBLAS") words >> b.version;
  const std::string core = openblas_get_corename() ? openblas_get_corename() : "";
  while (words >> word)
    if (word != core) b.features.push_back(word);
  b.details = {
      {"core", core},
      {"threading", threading_name(openblas_get_parallel())},
      {"threads", std::to_string(openblas_get_num_threads())},
  };
  return b;
}

}  // namespace bp::backends::detail
