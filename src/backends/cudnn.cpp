// torch.backends.cudnn's discovery face: is_available (built with cuDNN) and
// version() with the compatibility check of spec §5.1.

#include "backplane/backends/cudnn.h"

#include <string>

#include "backends/cuda/cuda_devices.h"
#include "backends/cuda/cuda_loader.h"
#include "backplane/backends/cuda.h"
#include "backplane/error.h"
#include "backplane_build_config.h"
#include "core/env.h"

namespace bp::backends::cudnn {
namespace {

struct Version3 {
  int major, minor, patch;
};
Version3 split(int v) { return {v / 10000, v / 100 % 100, v % 100}; }
std::string text(Version3 v) {
  return "(" + std::to_string(v.major) + ", " + std::to_string(v.minor) + ", " + std::to_string(v.patch) + ")";
}

// The version, or the error every call must raise: computed once.
struct Checked {
  std::optional<int> version;
  std::string error;
};

Checked check() {
  Checked out;
  if (!BP_HAVE_CUDNN) return out;
  const BpCudaApi* a = ::bp::cuda::api();
  if (a == nullptr) return out;
  const long runtime = a->library_version("cudnn");
  if (runtime < 0) return out;
  const long compiled = a->compiled_library_version("cudnn");
  const auto ld_library_path = env::get("LD_LIBRARY_PATH");
  out.error = compatibility_error(int(compiled), int(runtime), ld_library_path ? ld_library_path->c_str() : nullptr);
  auto skip = env::get("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK");
  if (skip && *skip == "1") out.error.clear();
  if (!out.error.empty()) return out;
  // cuDNN 9.11 dropped devices older than sm_75.
  if (runtime >= 91100) {
    for (int i = 0; i < ::bp::cuda::devices().count; ++i) {
      auto [major, minor] = cuda::get_device_capability(i);
      if (major * 10 + minor < 75) {
        out.error = "cuDNN version " + std::to_string(runtime) +
                    " is not compatible with devices with SM < 7.5 (device " + std::to_string(i) + " is sm_" +
                    std::to_string(major) + std::to_string(minor) + ")";
        return out;
      }
    }
  }
  out.version = int(runtime);
  return out;
}

}  // namespace

bool is_available() { return BP_HAVE_CUDNN != 0; }

std::string compatibility_error(int compiled, int runtime, const char* ld_library_path) {
  const Version3 c = split(compiled), r = split(runtime);
  bool ok;
  if (r.major != c.major) {
    ok = false;
  } else if (r.major < 7) {
    ok = r.minor == c.minor;
  } else {
    ok = r.minor >= c.minor;
  }
  if (ok) return {};
  std::string msg = "cuDNN version incompatibility: Backplane was compiled against " + text(c) +
                    " but found runtime version " + text(r) + ". ";
  if (ld_library_path != nullptr) {
    const std::string path = ld_library_path;
    if (path.find("cuda") != std::string::npos || path.find("cudnn") != std::string::npos) {
      msg += "Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn. Please either remove it "
             "from the path or install cudnn " + text(c);
    } else {
      msg += "one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH.";
    }
  }
  return msg;
}

std::optional<int> version() {
  static const Checked checked = check();
  if (!checked.error.empty()) throw_runtime("cudnn.version", checked.error);
  return checked.version;
}

}  // namespace bp::backends::cudnn
