// CUDA answers with and without a device: never a crash, errors that name the
// index and the valid range.

#include <gtest/gtest.h>

#include "backplane/backends/cuda.h"
#include "backplane/error.h"
#include "backplane_build_config.h"

namespace bp::backends::cuda {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Cuda, IsBuiltIsTheBuildConfiguration) { EXPECT_EQ(is_built(), bool(BP_HAVE_CUDA)); }

TEST(Cuda, AvailabilityAndCountAgree) {
  if (is_available()) {
    EXPECT_GT(device_count(), 0);
    EXPECT_EQ(unavailable_reason(), "");
  } else {
    EXPECT_EQ(device_count(), 0);
    const std::string why = unavailable_reason();
    EXPECT_TRUE(starts_with(why, is_built() ? "not available: " : "not built: ")) << why;
  }
}

TEST(Cuda, IndexPastTheLastDeviceIsAnIndexErrorNamingTheRange) {
  const int n = device_count();
  for (auto call : {+[](int i) { (void)get_device_name(i); }, +[](int i) { (void)get_device_capability(i); }}) {
    try {
      call(n);
      FAIL() << "expected an IndexError";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Index);
      EXPECT_EQ(e.value(), std::to_string(n));
      const std::string msg = e.what();
      EXPECT_NE(msg.find("device index " + std::to_string(n)), std::string::npos) << msg;
      if (n > 0) {
        EXPECT_NE(msg.find("0 <= index < " + std::to_string(n)), std::string::npos) << msg;
      } else {
        EXPECT_NE(msg.find("no valid index"), std::string::npos) << msg;
      }
    }
  }
}

TEST(Cuda, NegativeIndexIsAValueError) {
  try {
    (void)get_device_name(-1);
    FAIL() << "expected a ValueError";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_NE(std::string(e.what()).find("-1"), std::string::npos);
  }
}

TEST(Cuda, EveryDeviceHasANameAndACapability) {
  for (int i = 0; i < device_count(); ++i) {
    EXPECT_FALSE(get_device_name(i).empty());
    auto [major, minor] = get_device_capability(i);
    EXPECT_GE(major, 3);
    EXPECT_GE(minor, 0);
  }
}

}  // namespace
}  // namespace bp::backends::cuda
