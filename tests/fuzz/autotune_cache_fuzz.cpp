// The autotune cache file: the input is written as the file, loaded, then
// saved over (a merge with what is on disk). Whatever load accepts and save
// writes must load again; a refused file is left exactly as it was. Files
// live in a private folder on tmpfs when there is one (saves fsync).

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backplane/dispatch.h"
#include "backplane/error.h"
#include "fuzz/fuzz_util.h"

namespace {

std::string g_path;

std::string slurp() {
  std::ifstream in(g_path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  bp::fuzz::quiet();
  for (const char* base : {"/dev/shm", "/tmp"}) {
    std::string dir = std::string(base) + "/bp_fuzz_autotune_XXXXXX";
    if (::mkdtemp(dir.data()) != nullptr) {
      g_path = dir + "/cache.txt";
      return 0;
    }
  }
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace cache = bp::dispatch::autotune_cache;
  const std::string text(reinterpret_cast<const char*>(data), size);
  {
    std::ofstream out(g_path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  cache::clear();
  try {
    cache::load(g_path);
  } catch (const bp::Error&) {
  }
  bool saved = false;
  try {
    cache::save(g_path);
    saved = true;
  } catch (const bp::Error&) {
    BP_FUZZ_CHECK(slurp() == text);  // refused: untouched
  }
  if (saved) {
    cache::clear();
    try {
      cache::load(g_path);
    } catch (const bp::Error&) {
      __builtin_trap();  // we wrote a file we cannot read
    }
  }
  cache::clear();
  return 0;
}
