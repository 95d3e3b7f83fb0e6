#pragma once
// Where the launcher looks for the libraries it preloads (tcmalloc,
// jemalloc, Intel OpenMP): the spec's folders ($CONDA_PREFIX/lib,
// $VIRTUAL_ENV/lib, ~/.local/lib, /usr/local/lib, /usr/local/lib64,
// /usr/lib, /usr/lib64) plus the multiarch folders where Debian and Ubuntu
// install them (/usr/lib/x86_64-linux-gnu), and under versioned names
// (libjemalloc.so.2, libtcmalloc.so.4) since the unversioned link comes only
// with the -dev packages.

#include <optional>
#include <string>
#include <vector>

#include "launcher/distributed.h"

namespace bp::launcher {

// The folders in search order; `root` prefixes the system folders (tests).
std::vector<std::string> library_search_dirs(const EnvMap& env, const std::string& root = "");

// The first folder's lib<name>.so, else its shortest lib<name>.so.<version>
// (the soname link rather than the fully versioned file).
std::optional<std::string> find_library_in(const std::string& name,
                                           const std::vector<std::string>& dirs);

}  // namespace bp::launcher
