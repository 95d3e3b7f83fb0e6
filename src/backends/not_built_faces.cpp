// The module faces of backends a Linux x86 + NVIDIA build never contains
// (DESIGN.md §7): MPS (Apple), MKL (Backplane uses OpenBLAS and oneDNN),
// NNPACK, KleidiAI (Arm). Their answers are what PyTorch gives on a build
// without them; their flag rows still hold state.

#include "backplane/backends/kleidiai.h"
#include "backplane/backends/mkl.h"
#include "backplane/backends/mps.h"
#include "backplane/backends/nnpack.h"
#include "backplane/error.h"

namespace bp::backends {

bool mps::is_built() { return false; }
bool mps::is_available() { return false; }
// Only macOS can be "macOS x.y or newer", and Backplane does not build there.
bool mps::is_macos_or_newer(int, int) { return false; }
bool mps::is_macos13_or_newer(int minor) { return is_macos_or_newer(13, minor); }
std::string mps::get_name() {
  throw_not_implemented("mps.get_name", "mps.get_name: MPS is not built (Metal exists only on Apple platforms)");
}
int mps::get_core_count() {
  throw_not_implemented("mps.get_core_count",
                        "mps.get_core_count: MPS is not built (Metal exists only on Apple platforms)");
}

bool mkl::is_available() { return false; }
bool nnpack::is_available() { return false; }
bool kleidiai::is_available() { return false; }

}  // namespace bp::backends
