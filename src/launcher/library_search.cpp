#include "launcher/library_search.h"

#include <filesystem>

namespace bp::launcher {
namespace fs = std::filesystem;
namespace {

// The Debian multiarch tuple of the machine this was built for.
const char* multiarch_tuple() {
#if defined(__x86_64__)
  return "x86_64-linux-gnu";
#elif defined(__aarch64__)
  return "aarch64-linux-gnu";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return "powerpc64le-linux-gnu";
#elif defined(__s390x__)
  return "s390x-linux-gnu";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64-linux-gnu";
#else
  return nullptr;
#endif
}

bool is_version_suffix(const std::string& s) {
  // ".2", ".4.5.10": dot-separated digits.
  if (s.empty() || s.front() != '.') return false;
  bool digit_seen = false;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '.') {
      if (!digit_seen) return false;
      digit_seen = false;
    } else if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      digit_seen = true;
    } else {
      return false;
    }
  }
  return digit_seen;
}

}  // namespace

std::vector<std::string> library_search_dirs(const EnvMap& env, const std::string& root) {
  std::vector<std::string> dirs;
  auto from_env = [&](const char* var, const char* suffix) {
    auto it = env.find(var);
    if (it != env.end() && !it->second.empty()) dirs.push_back(it->second + suffix);
  };
  from_env("CONDA_PREFIX", "/lib");
  from_env("VIRTUAL_ENV", "/lib");
  from_env("HOME", "/.local/lib");
  const char* tuple = multiarch_tuple();
  auto system = [&](const std::string& dir) { dirs.push_back(root + dir); };
  system("/usr/local/lib");
  system("/usr/local/lib64");
  if (tuple) system(std::string("/usr/local/lib/") + tuple);
  system("/usr/lib");
  system("/usr/lib64");
  if (tuple) {
    system(std::string("/usr/lib/") + tuple);
    system(std::string("/lib/") + tuple);
  }
  return dirs;
}

std::optional<std::string> find_library_in(const std::string& name,
                                           const std::vector<std::string>& dirs) {
  const std::string plain = "lib" + name + ".so";
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (fs::exists(dir + "/" + plain, ec)) return dir + "/" + plain;
    std::optional<std::string> best;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string file = entry.path().filename().string();
      if (file.compare(0, plain.size(), plain) != 0 || !is_version_suffix(file.substr(plain.size())))
        continue;
      if (!best || file.size() < best->size() || (file.size() == best->size() && file < *best))
        best = file;
    }
    if (best) return dir + "/" + *best;
  }
  return std::nullopt;
}

}  // namespace bp::launcher
