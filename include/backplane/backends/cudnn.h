#pragma once
// torch.backends.cudnn, the discovery half (the knobs are flag rows).

#include <optional>
#include <string>

namespace bp::backends::cudnn {

// PyTorch's meaning: built with cuDNN (no device check).
bool is_available();
// The cuDNN version at run time as major*10000 + minor*100 + patch
// (91900 = 9.19.0); nullopt when not built or when backplane_cuda cannot be
// loaded. On the first call the runtime version is checked against the one
// Backplane was compiled with (spec §5.1); an incompatible one raises a
// RuntimeError unless PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1. Cached.
std::optional<int> version();

// The compatibility rule of spec §5.1, pure so it can be tested: returns ""
// when `runtime` may be used with a build against `compiled`, else the
// error message. Versions as above; ld_library_path nullptr when unset.
std::string compatibility_error(int compiled, int runtime, const char* ld_library_path);

}  // namespace bp::backends::cudnn
