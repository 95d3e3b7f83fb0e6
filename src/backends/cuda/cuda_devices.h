#pragma once
// The CUDA device census, taken once per process (as PyTorch caches its
// device count): whether backplane_cuda loads, how many devices it sees, and
// if none, why.

#include <string>

namespace bp::cuda {

struct Devices {
  int count = 0;       // usable devices; 0 when CUDA is not available
  std::string reason;  // "not built: ...", "not available: ..."; "" when count > 0
};

const Devices& devices();

}  // namespace bp::cuda
