// The conv checks that read no flag (checks.h).

#include "ops/conv/checks.h"

#include <string>

namespace bp::ops::conv::checks {

bool forward_only(const Params& p, Reasons& r) {
  return !p.transposed || r.fail("a forward convolution", "a transposed one");
}

bool winograd_3x3(const Params& p, Reasons& r) {
  const bool ok = p.spatial == 2 && p.kernel[1] == 3 && p.kernel[2] == 3 && p.unit_stride() && p.unit_dilation();
  if (ok) return true;
  return r.fail("a 2-D 3x3 kernel with stride 1 and dilation 1", [&] {
    const int first = 3 - p.spatial;
    std::string k, s, d;
    for (int a = first; a < 3; ++a) {
      const char* sep = a == first ? "" : "x";
      k += sep + std::to_string(p.kernel[a]);
      s += sep + std::to_string(p.stride[a]);
      d += sep + std::to_string(p.dilation[a]);
    }
    return std::to_string(p.spatial) + "-D kernel " + k + ", stride " + s + ", dilation " + d;
  });
}

}  // namespace bp::ops::conv::checks
