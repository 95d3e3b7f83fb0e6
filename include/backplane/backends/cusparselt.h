#pragma once
// torch.backends.cusparselt: 2:4 structured-sparse matmul library.

#include <optional>

namespace bp::backends::cusparselt {

// Built with cuSPARSELt (PyTorch's build-time meaning).
bool is_available();
// The library's integer version (602 = 0.6.2); nullopt when not built or
// when backplane_cuda cannot be loaded.
std::optional<int> version();
// Highest algorithm id of the library's matmul search, from PyTorch's table
// (400 -> 4, 502 -> 5, 602 -> 37); nullopt when not built or for a version
// the table does not know.
std::optional<int> get_max_alg_id();
// The table itself, for tests: nullopt for unknown versions.
std::optional<int> max_alg_id_for_version(int version);

}  // namespace bp::backends::cusparselt
