#pragma once
// Parsers for the PyTorch / vendor env vars named in the flag table
// (VENDOR_PARSE column of detail/flags.def). Each returns the flag's raw
// value, or nullopt (after one warning when the text is malformed) to keep
// the default. The value is then validated by the flag's row like any other
// (load_env in flags.cpp: out of the domain warns and keeps the default), so
// a parser only turns text into a number, with overflow checks: a number too
// large for int64 comes back as INT64_MAX, which every bounded row refuses.
// Semantics: spec/torch_backends.md sections 3, 4.6 and 4.9.

#include <cstdint>
#include <optional>
#include <string_view>

namespace bp::flags {

std::optional<int64_t> parse_truthy_tf32(const char* name, std::string_view text);
std::optional<int64_t> parse_truthy_cublaslt(const char* name, std::string_view text);
std::optional<int64_t> parse_truthy_cusolver(const char* name, std::string_view text);
std::optional<int64_t> parse_truthy_ck(const char* name, std::string_view text);
// ":SIZE_KiB:COUNT" groups, summed, in bytes (INT64_MAX when that overflows).
std::optional<int64_t> parse_cublas_workspace_config(const char* name, std::string_view text);
// An integer number of KiB, in bytes (INT64_MAX when that overflows).
std::optional<int64_t> parse_cublaslt_workspace_kib(const char* name, std::string_view text);
// "default", "avx2", "avx512" (exact case); anything else warns and auto-detects.
std::optional<int64_t> parse_aten_cpu_capability(const char* name, std::string_view text);

// The ROCm spelling PyTorch also reads for a vendor env var
// (TORCH_BLAS_PREFER_CUBLASLT -> TORCH_BLAS_PREFER_HIPBLASLT), or nullptr.
const char* vendor_env_alias(const char* name);

// Bytes of a CUBLAS_WORKSPACE_CONFIG string, nullopt when it has no group,
// INT64_MAX when the sum overflows.
std::optional<int64_t> cublas_workspace_config_bytes(std::string_view text);

}  // namespace bp::flags
