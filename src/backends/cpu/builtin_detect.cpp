// The fallback CPU detector: GCC/Clang's __builtin_cpu_supports (which checks
// the OS's XSAVE support as well as CPUID) plus Linux's /sys and /proc.

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "backends/cpu/cpu_features.h"
#include "core/cpu_f16c.h"

namespace bp::backends::cpu::detail {
namespace {

std::string read_first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string read_proc_cpuinfo_field(const char* field) {
  std::ifstream in("/proc/cpuinfo");
  const std::string key = field;
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

void read_linux_topology(CpuFeatures& out) {
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  out.logical = online > 0 ? int(online) : 1;
  // A core is a distinct (package, core id) pair among the online CPUs.
  std::set<std::string> cores, packages;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = entry.path().filename();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || !std::isdigit(static_cast<unsigned char>(name[3])))
      continue;
    const auto topo = entry.path() / "topology";
    const std::string package = read_first_line(topo / "physical_package_id");
    const std::string core = read_first_line(topo / "core_id");
    if (package.empty() || core.empty()) continue;
    packages.insert(package);
    cores.insert(package + ":" + core);
  }
  out.cores = cores.empty() ? out.logical : int(cores.size());
  out.packages = packages.empty() ? 1 : int(packages.size());
}

CpuFeatures detect_with_builtins() {
  CpuFeatures f;
  f.detector = "compiler builtins";
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.vendor = __builtin_cpu_is("amd") ? "AMD" : __builtin_cpu_is("intel") ? "Intel" : "unknown";
  // __builtin_cpu_supports needs string literals, hence one line per name.
  const std::pair<const char*, bool> found[] = {
      {"sse4_2", bool(__builtin_cpu_supports("sse4.2"))},
      {"avx", bool(__builtin_cpu_supports("avx"))},
      {"f16c", bp::detail::cpu_has_f16c()},
      {"fma", bool(__builtin_cpu_supports("fma"))},
      {"avx2", bool(__builtin_cpu_supports("avx2"))},
      {"avx512f", bool(__builtin_cpu_supports("avx512f"))},
      {"avx512cd", bool(__builtin_cpu_supports("avx512cd"))},
      {"avx512bw", bool(__builtin_cpu_supports("avx512bw"))},
      {"avx512dq", bool(__builtin_cpu_supports("avx512dq"))},
      {"avx512vl", bool(__builtin_cpu_supports("avx512vl"))},
      {"avx512_vnni", bool(__builtin_cpu_supports("avx512vnni"))},
      {"avx512_bf16", bool(__builtin_cpu_supports("avx512bf16"))},
      {"avx512vbmi", bool(__builtin_cpu_supports("avx512vbmi"))},
      {"avx512ifma", bool(__builtin_cpu_supports("avx512ifma"))},
  };
  for (const auto& [name, yes] : found)
    if (yes) f.isa.push_back(name);
#else
  f.vendor = "unknown";
#endif
  f.model = read_proc_cpuinfo_field("model name");
  read_linux_topology(f);
  return f;
}

}  // namespace bp::backends::cpu::detail
