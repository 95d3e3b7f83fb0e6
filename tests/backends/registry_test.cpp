// The backend registry: every backend listed once, the four-question rules
// hold for every record, and built answers match the build configuration.

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "backends/probes.h"
#include "backplane/backends/registry.h"
#include "backplane/error.h"
#include "backplane_build_config.h"

namespace bp::backends {
namespace {

const BackendInfo& find(const std::vector<BackendInfo>& all, const std::string& name) {
  for (const auto& b : all)
    if (b.name == name) return b;
  throw std::runtime_error("no backend " + name);
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Registry, ListsEveryBackendOnceInTheDocumentedOrder) {
  const std::vector<std::string> expected = {
      "cpu",      "openmp", "openblas",   "onednn", "fftw", "cuda", "cublas", "cublaslt", "cudnn", "cufft",
      "cusolver", "cusparselt", "nccl", "mkl",    "nnpack", "mps", "miopen", "kleidiai", "rocm"};
  std::vector<std::string> names;
  for (const auto& b : list_backends()) names.push_back(b.name);
  EXPECT_EQ(names, expected);
  EXPECT_EQ(backend_names(), expected);
}

TEST(Registry, EveryRecordKeepsTheFourQuestionsApart) {
  for (const auto& b : list_backends()) {
    SCOPED_TRACE(b.name);
    if (!b.built) {
      EXPECT_FALSE(b.available);
      EXPECT_TRUE(starts_with(b.reason, "not built: ")) << b.reason;
    } else if (!b.available) {
      EXPECT_TRUE(starts_with(b.reason, "not available: ")) << b.reason;
    } else {
      EXPECT_EQ(b.reason, "");
    }
  }
}

TEST(Registry, BuiltAnswersMatchTheBuildConfiguration) {
  const auto all = list_backends();
  EXPECT_EQ(find(all, "openmp").built, bool(BP_HAVE_OPENMP));
  EXPECT_EQ(find(all, "openblas").built, bool(BP_HAVE_OPENBLAS));
  EXPECT_EQ(find(all, "onednn").built, bool(BP_HAVE_ONEDNN));
  EXPECT_EQ(find(all, "fftw").built, bool(BP_HAVE_FFTW));
  EXPECT_EQ(find(all, "cuda").built, bool(BP_HAVE_CUDA));
  EXPECT_EQ(find(all, "cublas").built, bool(BP_HAVE_CUBLAS));
  EXPECT_EQ(find(all, "cublaslt").built, bool(BP_HAVE_CUBLASLT));
  EXPECT_EQ(find(all, "cudnn").built, bool(BP_HAVE_CUDNN));
  EXPECT_EQ(find(all, "cufft").built, bool(BP_HAVE_CUFFT));
  EXPECT_EQ(find(all, "cusolver").built, bool(BP_HAVE_CUSOLVER));
}

TEST(Registry, BackendsALinuxNvidiaBuildNeverHasSaySo) {
  const auto all = list_backends();
  for (const char* name : {"mkl", "nnpack", "mps", "miopen", "kleidiai", "rocm"}) {
    SCOPED_TRACE(name);
    const auto& b = find(all, name);
    EXPECT_FALSE(b.built);
    EXPECT_TRUE(starts_with(b.reason, "not built: "));
    EXPECT_GT(b.reason.size(), std::string("not built: ").size());
  }
}

TEST(Registry, CpuLibrariesReportARunTimeVersion) {
  const std::regex dotted(R"(\d+\.\d+(\.\d+)?)");
  for (const auto& b : list_backends()) {
    if (b.name != "openmp" && b.name != "openblas" && b.name != "onednn" && b.name != "fftw") continue;
    if (!b.built) continue;
    SCOPED_TRACE(b.name);
    EXPECT_TRUE(b.available);
    EXPECT_TRUE(std::regex_match(b.version, dotted)) << b.version;
  }
}

TEST(Registry, CpuRecordDescribesThePackage) {
  const auto cpu = backend_info("cpu");
  EXPECT_TRUE(cpu.built);
  EXPECT_TRUE(cpu.available);
  ASSERT_EQ(cpu.devices.size(), 1u);
  EXPECT_FALSE(cpu.devices[0].name.empty());
  std::set<std::string> keys;
  for (const auto& [k, v] : cpu.details) keys.insert(k);
  for (const char* k : {"vendor", "detector", "capability detected", "capability cap", "capability"})
    EXPECT_TRUE(keys.count(k)) << k;
}

TEST(Registry, CudaLibrariesShareCudasAvailability) {
  const auto all = list_backends();
  const auto& cuda = find(all, "cuda");
  for (const char* name : {"cublas", "cublaslt", "cudnn", "cufft", "cusolver"}) {
    SCOPED_TRACE(name);
    const auto& lib = find(all, name);
    if (lib.built) {
      EXPECT_EQ(lib.available, cuda.available);
      // Loaded but deviceless: the version is known, the reason points at cuda.
      if (!cuda.available && !lib.version.empty())
        EXPECT_EQ(lib.reason, "not available: no usable CUDA device (see the cuda record)");
    }
  }
}

TEST(Registry, UnknownNameIsAValueErrorListingTheKnownOnes) {
  try {
    backend_info("tpu");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Value);
    EXPECT_EQ(e.value(), "tpu");
    EXPECT_NE(e.allowed().find("cudnn"), std::string::npos);
  }
}

TEST(Registry, DecodesTheTenThousandsVersionEncoding) {
  EXPECT_EQ(detail::decode_version(91900), "9.19.0");
  EXPECT_EQ(detail::decode_version(130100), "13.1.0");
  EXPECT_EQ(detail::decode_version(602), "0.6.2");
  EXPECT_EQ(detail::decode_version(-1), "");
}

}  // namespace
}  // namespace bp::backends
