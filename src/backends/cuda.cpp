// torch.backends.cuda.is_built and torch.cuda's device queries, through the
// backplane_cuda library (Note [Loading backplane_cuda]).

#include "backplane/backends/cuda.h"

#include "backends/cuda/cuda_devices.h"
#include "backends/cuda/cuda_loader.h"
#include "backplane/error.h"

namespace bp::backends::cuda {
namespace {

// The valid range in words, for error messages.
std::string valid_range() {
  const auto& d = ::bp::cuda::devices();
  if (d.count == 0) return "no valid index: CUDA is " + d.reason;
  return "0 <= index < " + std::to_string(d.count);
}

void check_index(const char* what, int index) {
  const std::string subject = std::string("cuda.") + what;
  if (index < 0) {
    throw Error(ErrorKind::Value,
                subject + ": device index must be >= 0, got " + std::to_string(index) + " (" + valid_range() + ")",
                subject, std::to_string(index), valid_range());
  }
  if (index >= device_count()) {
    throw Error(ErrorKind::Index,
                subject + ": device index " + std::to_string(index) + " is out of range (" + valid_range() + ")",
                subject, std::to_string(index), valid_range());
  }
}

}  // namespace

bool is_built() { return ::bp::cuda::is_built(); }
bool is_available() { return ::bp::cuda::devices().count > 0; }
std::string unavailable_reason() { return ::bp::cuda::devices().reason; }
int device_count() { return ::bp::cuda::devices().count; }

std::string get_device_name(int index) {
  check_index("get_device_name", index);
  char name[256] = "";
  if (::bp::cuda::api()->device_name(index, name, sizeof name) != 0)
    throw_runtime("cuda.get_device_name", "cannot read the name of CUDA device " + std::to_string(index));
  return name;
}

std::pair<int, int> get_device_capability(int index) {
  check_index("get_device_capability", index);
  int major = 0, minor = 0;
  if (::bp::cuda::api()->device_capability(index, &major, &minor) != 0)
    throw_runtime("cuda.get_device_capability",
                  "cannot read the compute capability of CUDA device " + std::to_string(index));
  return {major, minor};
}

SelftestResult selftest() {
  if (!is_available()) return {false, false, "skipped: CUDA is " + unavailable_reason()};
  char err[512] = "";
  if (::bp::cuda::api()->selftest(err, sizeof err) == 0)
    return {true, true, "kernel ran on device 0 and returned the right result"};
  return {true, false, std::string("failed: ") + err};
}

}  // namespace bp::backends::cuda
