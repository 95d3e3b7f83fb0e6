// The PyTorch / vendor env-var parsers (spec 3, 4.6, 4.9).

#include <gtest/gtest.h>

#include <limits>

#include "backplane/detail/flag_types.h"
#include "core/vendor_env.h"

namespace {
using namespace bp::flags;

TEST(VendorEnv, CublasWorkspaceConfigSumsGroups) {
  EXPECT_EQ(cublas_workspace_config_bytes(":4096:8"), 4096 * 1024 * 8);
  EXPECT_EQ(cublas_workspace_config_bytes(":16:8"), 16 * 1024 * 8);
  EXPECT_EQ(cublas_workspace_config_bytes(":4096:2:16:8"), 4096 * 1024 * 2 + 16 * 1024 * 8);
  EXPECT_FALSE(cublas_workspace_config_bytes("4096"));
  EXPECT_FALSE(cublas_workspace_config_bytes(":abc:8"));
  EXPECT_FALSE(cublas_workspace_config_bytes(""));
  EXPECT_FALSE(parse_cublas_workspace_config("CUBLAS_WORKSPACE_CONFIG", "garbage"));
}

// Issue 10 item 8: ":999999999999:999999999999" overflowed a signed
// multiplication (UBSan) and stored a nonsense size. Overflow is INT64_MAX,
// which the row's validation refuses (flags_test, test_flags_table.py).
TEST(VendorEnv, WorkspaceSizesNeverOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(cublas_workspace_config_bytes(":999999999999:999999999999"), kMax);
  EXPECT_EQ(cublas_workspace_config_bytes(":99999999999999999999999:1"), kMax);
  EXPECT_EQ(cublas_workspace_config_bytes(":4096:8:9007199254740992:1024"), kMax);
  EXPECT_EQ(parse_cublaslt_workspace_kib("CUBLASLT_WORKSPACE_SIZE", "9223372036854775807"), kMax);
  EXPECT_EQ(parse_cublaslt_workspace_kib("CUBLASLT_WORKSPACE_SIZE", "1099511627776"), int64_t{1} << 50);
  EXPECT_FALSE(parse_cublaslt_workspace_kib("CUBLASLT_WORKSPACE_SIZE", "99999999999999999999"));
}

TEST(VendorEnv, CublasltWorkspaceIsKiB) {
  EXPECT_EQ(parse_cublaslt_workspace_kib("CUBLASLT_WORKSPACE_SIZE", "2048"), 2048 * 1024);
  EXPECT_FALSE(parse_cublaslt_workspace_kib("CUBLASLT_WORKSPACE_SIZE", "2MB"));
  EXPECT_FALSE(parse_cublaslt_workspace_kib("CUBLASLT_WORKSPACE_SIZE", "-4"));
}

TEST(VendorEnv, TorchBooleansAreExactlyOneOrZero) {
  EXPECT_EQ(parse_truthy_cublaslt("TORCH_BLAS_PREFER_CUBLASLT", "1"), static_cast<int64_t>(BlasBackend::Cublaslt));
  EXPECT_FALSE(parse_truthy_cublaslt("TORCH_BLAS_PREFER_CUBLASLT", "0"));
  EXPECT_FALSE(parse_truthy_cublaslt("TORCH_BLAS_PREFER_CUBLASLT", "yes"));  // warns, keeps the default
  EXPECT_EQ(parse_truthy_tf32("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"), static_cast<int64_t>(Precision::tf32));
  EXPECT_EQ(parse_truthy_cusolver("TORCH_LINALG_PREFER_CUSOLVER", "1"), static_cast<int64_t>(LinalgBackend::Cusolver));
  EXPECT_EQ(parse_truthy_ck("TORCH_ROCM_FA_PREFER_CK", "1"), static_cast<int64_t>(RocmFABackend::Ck));
}

TEST(VendorEnv, AtenCpuCapability) {
  EXPECT_EQ(parse_aten_cpu_capability("ATEN_CPU_CAPABILITY", "default"), static_cast<int64_t>(CpuCapabilityCap::Default));
  EXPECT_EQ(parse_aten_cpu_capability("ATEN_CPU_CAPABILITY", "avx2"), static_cast<int64_t>(CpuCapabilityCap::Avx2));
  // Exact case, as PyTorch 2.15: upper case warns and auto-detects.
  EXPECT_FALSE(parse_aten_cpu_capability("ATEN_CPU_CAPABILITY", "AVX2"));
  EXPECT_FALSE(parse_aten_cpu_capability("ATEN_CPU_CAPABILITY", "DEFAULT"));
  EXPECT_EQ(parse_aten_cpu_capability("ATEN_CPU_CAPABILITY", "avx512"), static_cast<int64_t>(CpuCapabilityCap::Avx512));
  EXPECT_FALSE(parse_aten_cpu_capability("ATEN_CPU_CAPABILITY", "sve256"));
}

}  // namespace
