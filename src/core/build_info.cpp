#include "backplane/build_info.h"

#include "backplane/version.h"
#include "backplane_build_config.h"

namespace bp {

const BuildInfo& build_info() {
  static const BuildInfo info = [] {
    BuildInfo b;
    b.version = BACKPLANE_VERSION_STRING;
    b.compiler = BP_CXX_COMPILER;
    b.build_type = BP_BUILD_TYPE;
    b.cuda_toolkit = BP_HAVE_CUDA ? BP_CUDA_TOOLKIT_VERSION : "";
#define BP_X(name, built, why) b.backends.push_back({name, built != 0, why});
    BP_BUILD_BACKENDS(BP_X)
#undef BP_X
    return b;
  }();
  return info;
}

}  // namespace bp
