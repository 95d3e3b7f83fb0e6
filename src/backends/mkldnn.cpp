// torch.backends.mkldnn's discovery face: compile-time answers.

#include "backplane/backends/onednn.h"
#include "backplane_build_config.h"

namespace bp::backends::mkldnn {

bool is_available() { return BP_HAVE_ONEDNN != 0; }

// Backplane builds oneDNN's x86 CPU engine only; ACL is an Arm library.
bool is_acl_available() { return false; }

#if !BP_HAVE_ONEDNN
// Without oneDNN there is nothing to connect (onednn/onednn_verbose.cpp is
// not compiled); the flag row still holds its value.
void connect_verbose_flag() {}
#endif

}  // namespace bp::backends::mkldnn
