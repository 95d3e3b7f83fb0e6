#pragma once
// Shared by the fuzz targets: silence warnings (a bad env value warns on
// purpose, and stderr would slow the fuzzer down), and a check that traps.

#include <string>

#include "backplane/log.h"

namespace bp::fuzz {

inline void quiet() {
  static const bool done = [] {
    log::set_warning_handler([](const std::string&) {});
    return true;
  }();
  (void)done;
}

// A broken invariant: libFuzzer reports it as a crash with the input.
#define BP_FUZZ_CHECK(cond) \
  do {                      \
    if (!(cond)) __builtin_trap(); \
  } while (0)

}  // namespace bp::fuzz
