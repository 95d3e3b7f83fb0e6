#pragma once
// Backend discovery: what this build contains and what this machine can run.
//
// One record per backend Backplane knows, in a fixed order (CPU first, then
// the CPU libraries, then CUDA and its libraries, then the backends that a
// Linux x86 + NVIDIA build never has). Each record answers the first two of
// the four questions of DESIGN.md §2: *built* (compiled in) and *available*
// (usable here and now). Versions are read from the libraries at run time,
// never from the headers Backplane was compiled against.
//
//   for (const auto& b : bp::backends::list_backends())
//     std::cout << b.name << (b.available ? " ok" : " " + b.reason) << "\n";

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bp::backends {

// One device a backend can run on: the CPU package, a CUDA GPU.
struct Device {
  int index = 0;
  std::string name;         // "AMD EPYC", "NVIDIA H200"
  std::string description;  // "2 cores, 2 logical processors", "compute capability 9.0"
};

struct BackendInfo {
  std::string name;         // "cpu", "openblas", "cudnn", ...
  bool built = false;       // compiled into this build
  bool available = false;   // usable in this process on this machine
  // Why it is not available, starting with "not built: " or
  // "not available: "; empty when available.
  std::string reason;
  std::string version;      // the library's version at run time; "" when unknown
  std::vector<Device> devices;
  std::vector<std::string> features;  // ISA extensions, library capabilities
  // Other facts worth showing (ordered): "threading" -> "openmp", ...
  std::vector<std::pair<std::string, std::string>> details;
};

// Every backend, in display order. Probes are cheap after the first call
// (CPU detection and the CUDA library load are done once per process).
std::vector<BackendInfo> list_backends();

// The record of one backend; ValueError naming the known backends if
// `name` is not one of them.
BackendInfo backend_info(std::string_view name);

// The names list_backends() reports, in order.
std::vector<std::string> backend_names();

}  // namespace bp::backends
