#pragma once
// Shared by the kernel tests: bp::set_num_threads for one scope, restored after.

#include "backplane/runtime.h"

namespace bp::test {

class ThreadScope {
 public:
  explicit ThreadScope(int n) { bp::set_num_threads(n); }
  ~ThreadScope() { bp::set_num_threads(saved_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_ = bp::get_num_threads();
};

}  // namespace bp::test
