#include "backends/cuda/cuda_loader.h"

#include <dlfcn.h>

#include <mutex>

#include "backplane_build_config.h"
#include "backplane/log.h"
#include "core/env.h"

namespace bp::cuda {
namespace {

struct Loaded {
  const BpCudaApi* api = nullptr;
  std::string error;
  std::string path;
};

std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr) return {};
  std::string p = info.dli_fname;
  auto slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

Loaded load() {
  Loaded out;
  if (!BP_HAVE_CUDA) {
    out.error = "not built: this build of Backplane has no CUDA support";
    return out;
  }
  if (auto forced = env::get("BACKPLANE_CUDA_LIBRARY")) {
    out.path = *forced;
  } else {
    std::string dir = own_directory();
    out.path = (dir.empty() ? std::string() : dir + "/") + BP_CUDA_LIBRARY_NAME;
  }
  void* handle = dlopen(out.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    out.error = std::string("cannot load ") + out.path + ": " + (why ? why : "unknown error");
    return out;
  }
  auto fn = reinterpret_cast<BpCudaApiFn>(dlsym(handle, "bp_cuda_api"));
  if (fn == nullptr) {
    out.error = out.path + " has no bp_cuda_api symbol";
    return out;
  }
  const BpCudaApi* api = fn();
  if (api == nullptr || api->abi_version != BP_CUDA_ABI_VERSION) {
    out.error = out.path + " has ABI version " + std::to_string(api ? api->abi_version : -1) +
                ", expected " + std::to_string(BP_CUDA_ABI_VERSION);
    return out;
  }
  out.api = api;
  // The library's one registration entry point fills the ops' CUDA slots.
  // A failure leaves them unfilled ("not built") and is said once; CUDA
  // itself stays usable.
  char err[512] = {};
  if (api->register_implementations(err, sizeof err) != 0)
    log::warn(std::string("backplane_cuda could not register its implementations: ") + err);
  return out;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

bool is_built() { return BP_HAVE_CUDA != 0; }
const BpCudaApi* api() { return loaded().api; }
const std::string& load_error() { return loaded().error; }
const std::string& library_path() { return loaded().path; }

}  // namespace bp::cuda
