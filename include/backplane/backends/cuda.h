#pragma once
// torch.backends.cuda.is_built and the device queries of torch.cuda
// (backplane.cuda in Python). Every answer comes from the backplane_cuda
// library, loaded on the first question (Note [Loading backplane_cuda]);
// without it, or without a GPU, the answers are "not available", never a crash.
// (The knobs of torch.backends.cuda are flag rows: backplane/flags.h.)

#include <string>
#include <utility>

namespace bp::backends::cuda {

// Compiled with CUDA (says nothing about drivers or devices).
bool is_built();
// A CUDA device is usable here: the library loads and sees at least one GPU.
bool is_available();
// Why is_available() is false ("not built: ...", "not available: ..."); "" when true.
std::string unavailable_reason();
// Number of usable devices; 0 when CUDA is not available.
int device_count();
// Name of device `index`. A negative index is a ValueError; one at or past
// device_count() an IndexError naming the valid range.
std::string get_device_name(int index = 0);
// (major, minor) compute capability of device `index`; errors as above.
std::pair<int, int> get_device_capability(int index = 0);

// Runs a tiny kernel end to end on device 0 (allocate, launch, copy back,
// check): proves the toolchain, the driver and the device agree.
struct SelftestResult {
  bool ran;             // false when CUDA is not available (skipped)
  bool ok;
  std::string message;  // what happened, or why it was skipped
};
SelftestResult selftest();

}  // namespace bp::backends::cuda
