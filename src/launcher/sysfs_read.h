#pragma once
// Small helpers to read one-line kernel files (sysfs, procfs, cgroupfs).

#include <optional>
#include <string>

namespace bp::launcher {

// The file's content without the trailing newline; nullopt when it cannot be read.
std::optional<std::string> read_small_file(const std::string& path);
// The file parsed as one integer; nullopt when absent or not an integer.
std::optional<int> read_int_file(const std::string& path);

}  // namespace bp::launcher
