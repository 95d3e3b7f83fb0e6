#include "backplane/log.h"

#include <cstdio>
#include <mutex>
#include <set>

namespace bp::log {
namespace {
std::mutex& mutex() {
  static std::mutex m;
  return m;
}
WarningHandler& handler() {
  static WarningHandler h;
  return h;
}
}  // namespace

void warn(const std::string& message) {
  WarningHandler h;
  {
    std::lock_guard<std::mutex> lock(mutex());
    h = handler();
  }
  if (h) {
    h(message);
  } else {
    std::fprintf(stderr, "[backplane] warning: %s\n", message.c_str());
  }
}

void warn_once(const std::string& key, const std::string& message) {
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> lock(mutex());
    if (!seen.insert(key).second) return;
  }
  warn(message);
}

WarningHandler set_warning_handler(WarningHandler h) {
  std::lock_guard<std::mutex> lock(mutex());
  WarningHandler old = std::move(handler());
  handler() = std::move(h);
  return old;
}

void trace(const std::string& line) { std::fprintf(stderr, "[backplane] %s\n", line.c_str()); }

}  // namespace bp::log
