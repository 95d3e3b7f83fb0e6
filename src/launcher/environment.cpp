#include "launcher/environment.h"

#include <sstream>

#include "backplane/error.h"

namespace bp::launcher {
namespace {

constexpr const char* kJemallocConf = "oversize_threshold:1,background_thread:true,metadata_thp:auto";

struct PreloadLibrary {
  const char* name;  // lib<name>.so
  const char* hint;  // how to install it
};
constexpr PreloadLibrary kTcmalloc{"tcmalloc",
                                   "conda install -c conda-forge gperftools, or apt install libgoogle-perftools4"};
constexpr PreloadLibrary kJemalloc{"jemalloc",
                                   "conda install -c conda-forge jemalloc, or apt install libjemalloc2"};
constexpr PreloadLibrary kIomp{"iomp5", "conda install mkl, or apt install libomp-dev"};

std::vector<std::string> split_preload(const std::string& value) {
  std::vector<std::string> entries;
  std::istringstream items(value);
  for (std::string item; std::getline(items, item, ':');)
    if (!item.empty()) entries.push_back(item);
  return entries;
}

std::string basename_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// LD_PRELOAD as it is being built: the user's valid entries, with our
// libraries prepended.
class Preload {
 public:
  Preload(const EnvMap& env, const Host& host, Messages& m) : host_(host), m_(m) {
    auto it = env.find("LD_PRELOAD");
    if (it == env.end()) return;
    present_ = true;
    for (const std::string& entry : split_preload(it->second)) {
      if (host.glob_matches(entry))
        entries_.push_back(entry);
      else
        m.warnings.push_back(entry + " doesn't exist. Removing it from LD_PRELOAD.");
    }
  }

  // Adds lib<name>.so unless an entry already names it. Returns whether the
  // library is preloaded afterwards; `warn` says whether a miss is worth a warning.
  bool add(const PreloadLibrary& lib, bool warn) {
    const std::string file = std::string("lib") + lib.name + ".so";
    for (const std::string& entry : entries_)
      if (basename_of(entry).compare(0, file.size(), file) == 0) {
        m_.notes.push_back(file + " is already in LD_PRELOAD (" + entry + ")");
        return true;
      }
    if (auto path = host_.find_library(lib.name)) {
      entries_.insert(entries_.begin(), *path);
      return true;
    }
    if (warn)
      m_.warnings.push_back("Unable to find the " + file +
                            " library in the library folders (see docs/run-cpu.md); it will not be "
                            "preloaded. Install it with: " + lib.hint);
    return false;
  }

  bool should_set() const { return present_ || !entries_.empty(); }
  std::string value() const {
    std::string out;
    for (const std::string& e : entries_) out += (out.empty() ? "" : ":") + e;
    return out;
  }

 private:
  const Host& host_;
  Messages& m_;
  bool present_ = false;
  std::vector<std::string> entries_;
};

// Sets `name` unless the user did; then the user's value stays.
void set_unless_preset(std::vector<EnvVar>& vars, const EnvMap& env, const std::string& name,
                       const std::string& value, Messages& m) {
  auto it = env.find(name);
  if (it == env.end()) {
    vars.push_back({name, value, false});
    return;
  }
  if (it->second != value) m.warnings.push_back(kept_value_warning(name, it->second, value));
  vars.push_back({name, it->second, true});
}

}  // namespace

std::string kept_value_warning(const std::string& name, const std::string& kept,
                               const std::string& ignored) {
  return "Overriding value with the one set in environment variable: " + name +
         ". Value applied: " + kept + ". Value ignored: " + ignored;
}

std::vector<EnvVar> common_environment(const LaunchOptions& o, const EnvMap& env, const Host& host,
                                       bool set_kmp_affinity, Messages& m) {
  if (o.enable_tcmalloc && o.enable_jemalloc)
    throw_runtime("--enable-tcmalloc", "Unable to enable TCMalloc and JEMalloc at the same time.");
  std::vector<EnvVar> vars;
  Preload preload(env, host, m);

  bool set_malloc_conf = false;
  if (o.enable_tcmalloc) {
    preload.add(kTcmalloc, true);
  } else if (o.enable_jemalloc) {
    set_malloc_conf = preload.add(kJemalloc, true);
  } else if (!o.use_default_allocator) {
    // Neither asked for: the first one found. As in the spec, MALLOC_CONF is
    // set only when jemalloc was asked for by name.
    if (!preload.add(kTcmalloc, false) && !preload.add(kJemalloc, false))
      m.warnings.push_back(
          "Neither TCMalloc nor JeMalloc is found in the library folders; the default allocator "
          "is used, which may drop the performance. Install one with: " +
          std::string(kTcmalloc.hint) + "; or " + kJemalloc.hint);
  }

  bool iomp = !o.disable_iomp && preload.add(kIomp, true);
  if (preload.should_set()) vars.push_back({"LD_PRELOAD", preload.value(), false});
  if (set_malloc_conf) set_unless_preset(vars, env, "MALLOC_CONF", kJemallocConf, m);
  if (iomp) {
    if (set_kmp_affinity)
      set_unless_preset(vars, env, "KMP_AFFINITY", "granularity=fine,compact,1,0", m);
    set_unless_preset(vars, env, "KMP_BLOCKTIME", "1", m);
  }
  return vars;
}

EnvVar omp_num_threads(int ncores, const EnvMap& env) {
  auto it = env.find("OMP_NUM_THREADS");
  if (it != env.end()) return {"OMP_NUM_THREADS", it->second, true};
  return {"OMP_NUM_THREADS", std::to_string(ncores), false};
}

}  // namespace bp::launcher
