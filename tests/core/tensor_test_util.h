#pragma once
// Shared by the tensor tests: asserting on bp::Error kind and text.

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>

#include "backplane/error.h"

namespace bp::test {

// Runs fn and checks it throws bp::Error of `kind` whose message contains
// every one of `parts`.
inline void expect_error(const std::function<void()>& fn, ErrorKind kind,
                         std::initializer_list<const char*> parts) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << "message: " << e.what();
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
        << "'" << p << "' missing from: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected a bp::Error (" << error_kind_name(kind) << ")";
}

}  // namespace bp::test
