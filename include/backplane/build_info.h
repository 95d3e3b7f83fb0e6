#pragma once
// How this Backplane was built: the configure summary as data, for
// `backplane info`, Python's backplane._C.built_with and tests.

#include <string>
#include <vector>

namespace bp {

struct BuiltBackend {
  std::string name;  // "openblas", "cudnn", ...
  bool built;
  std::string why;   // "found ...", "missing: ...", "disabled (...)"
};

struct BuildInfo {
  std::string version;
  std::string compiler;
  std::string build_type;
  std::string cuda_toolkit;  // "" without CUDA
  std::vector<BuiltBackend> backends;
};

const BuildInfo& build_info();

}  // namespace bp
