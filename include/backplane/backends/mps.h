#pragma once
// torch.backends.mps: Apple's Metal Performance Shaders. Backplane targets
// Linux x86 + NVIDIA, so MPS is never built; the API exists with truthful
// answers.

#include <string>

namespace bp::backends::mps {

bool is_built();      // false: no Metal support is compiled in
bool is_available();  // false: no Metal device can be used
// Whether this is macOS major.minor or newer; false on every other system.
bool is_macos_or_newer(int major, int minor);
bool is_macos13_or_newer(int minor = 0);
// The Metal device's name and GPU core count: NotImplementedError when MPS is
// not built (there is no device to ask).
std::string get_name();
int get_core_count();

}  // namespace bp::backends::mps
