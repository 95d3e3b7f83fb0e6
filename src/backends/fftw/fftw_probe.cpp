// The "fftw" record, from fftw_version ("fftw-3.3.10-sse2-avx": the version,
// then the SIMD codelets compiled in).

#include <fftw3.h>

#include <sstream>

#include "backends/probes.h"

namespace bp::backends::detail {

BackendInfo probe_fftw() {
  BackendInfo b;
  b.name = "fftw";
  b.built = true;
  b.available = true;
  std::istringstream parts(fftw_version);
  std::string part;
  int i = 0;
  while (std::getline(parts, part, '-')) {
    if (i == 1) b.version = part;
    if (i >= 2) b.features.push_back(part);
    ++i;
  }
  b.details = {{"version string", fftw_version}};
  return b;
}

}  // namespace bp::backends::detail
