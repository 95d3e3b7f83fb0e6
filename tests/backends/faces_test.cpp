// The small module faces: truthful answers for what this build has and lacks.

#include <gtest/gtest.h>

#include "backplane/backends/cusparselt.h"
#include "backplane/backends/kleidiai.h"
#include "backplane/backends/mkl.h"
#include "backplane/backends/mps.h"
#include "backplane/backends/nnpack.h"
#include "backplane/backends/onednn.h"
#include "backplane/backends/openmp.h"
#include "backplane/backends/registry.h"
#include "backplane/error.h"
#include "backplane_build_config.h"

namespace bp::backends {
namespace {

bool registry_built(const std::string& name) { return backend_info(name).built; }

TEST(Faces, AnswersMatchTheRegistry) {
  EXPECT_EQ(mkl::is_available(), registry_built("mkl"));
  EXPECT_EQ(nnpack::is_available(), registry_built("nnpack"));
  EXPECT_EQ(kleidiai::is_available(), registry_built("kleidiai"));
  EXPECT_EQ(mps::is_built(), registry_built("mps"));
  EXPECT_EQ(mkldnn::is_available(), registry_built("onednn"));
  EXPECT_EQ(openmp::is_available(), registry_built("openmp"));
  EXPECT_EQ(cusparselt::is_available(), registry_built("cusparselt"));
}

TEST(Faces, OneDnnFollowsTheBuild) {
  EXPECT_EQ(mkldnn::is_available(), bool(BP_HAVE_ONEDNN));
  EXPECT_FALSE(mkldnn::is_acl_available());
}

TEST(Faces, OpenMpReportsItsSpecificationAndThreads) {
  EXPECT_EQ(openmp::is_available(), bool(BP_HAVE_OPENMP));
  if (openmp::is_available()) {
    EXPECT_EQ(openmp::version(), backend_info("openmp").version);
    EXPECT_FALSE(openmp::version().empty());
  }
  EXPECT_GE(openmp::max_threads(), 1);
}

TEST(Faces, MpsIsAbsentOffApple) {
  EXPECT_FALSE(mps::is_available());
  EXPECT_FALSE(mps::is_macos13_or_newer());
  EXPECT_FALSE(mps::is_macos_or_newer(10, 0));
  EXPECT_THROW(mps::get_name(), Error);
  try {
    (void)mps::get_core_count();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
  }
}

TEST(Faces, CusparseltTableAndNotBuiltAnswers) {
  EXPECT_EQ(cusparselt::max_alg_id_for_version(400), 4);
  EXPECT_EQ(cusparselt::max_alg_id_for_version(502), 5);
  EXPECT_EQ(cusparselt::max_alg_id_for_version(602), 37);
  EXPECT_FALSE(cusparselt::max_alg_id_for_version(603).has_value());
  if (!cusparselt::is_available()) {
    EXPECT_FALSE(cusparselt::version().has_value());
    EXPECT_FALSE(cusparselt::get_max_alg_id().has_value());
  }
}

}  // namespace
}  // namespace bp::backends
