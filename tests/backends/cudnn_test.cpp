// cuDNN's build-time availability, run-time version and the compatibility
// rule of spec §5.1.

#include <gtest/gtest.h>

#include "backends/cuda/cuda_loader.h"
#include "backplane/backends/cudnn.h"
#include "backplane_build_config.h"

namespace bp::backends::cudnn {
namespace {

TEST(Cudnn, IsAvailableMeansBuiltWithCudnn) { EXPECT_EQ(is_available(), bool(BP_HAVE_CUDNN)); }

TEST(Cudnn, VersionIsReadFromTheLibraryWhenItLoads) {
  const auto v = version();
  if (!BP_HAVE_CUDNN || ::bp::cuda::api() == nullptr) {
    EXPECT_FALSE(v.has_value());
    return;
  }
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(*v, ::bp::cuda::api()->library_version("cudnn"));
  EXPECT_GE(*v, 80000);  // major*10000 + minor*100 + patch, cuDNN 8 or newer
}

TEST(Cudnn, OlderMinorThanCompiledIsIncompatible) {
  const std::string e = compatibility_error(90200, 90100, nullptr);
  EXPECT_NE(e.find("cuDNN version incompatibility"), std::string::npos);
  EXPECT_NE(e.find("(9, 2, 0)"), std::string::npos);
  EXPECT_NE(e.find("(9, 1, 0)"), std::string::npos);
}

TEST(Cudnn, NewerMinorAndOtherPatchAreCompatible) {
  EXPECT_EQ(compatibility_error(90200, 90300, nullptr), "");
  EXPECT_EQ(compatibility_error(90200, 90205, nullptr), "");
}

TEST(Cudnn, DifferentMajorIsIncompatible) { EXPECT_NE(compatibility_error(90200, 80900, nullptr), ""); }

TEST(Cudnn, BeforeCudnn7TheMinorMustMatch) {
  EXPECT_NE(compatibility_error(60100, 60200, nullptr), "");
  EXPECT_EQ(compatibility_error(60100, 60105, nullptr), "");
}

TEST(Cudnn, HintDependsOnLdLibraryPath) {
  EXPECT_NE(compatibility_error(90200, 90100, "/opt/cudnn/lib").find("Looks like your LD_LIBRARY_PATH"),
            std::string::npos);
  EXPECT_NE(compatibility_error(90200, 90100, "/opt/other").find("conflicting cuDNN in LD_LIBRARY_PATH"),
            std::string::npos);
  EXPECT_EQ(compatibility_error(90200, 90100, nullptr).find("LD_LIBRARY_PATH"), std::string::npos);
}

}  // namespace
}  // namespace bp::backends::cudnn
