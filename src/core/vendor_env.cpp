#include "core/vendor_env.h"

#include <limits>
#include <string>

#include "backplane/detail/flag_types.h"
#include "backplane/log.h"
#include "core/env.h"

namespace bp::flags {
namespace {
// PyTorch's check_env: "1" true, "0" false, anything else warns (Note [Env parsing]).
std::optional<int64_t> truthy_to(const char* name, std::string_view text, int64_t if_true) {
  auto b = env::check_torch_bool(name, text);
  if (b && *b) return if_true;
  return std::nullopt;
}
}  // namespace

std::optional<int64_t> parse_truthy_tf32(const char* n, std::string_view t) {
  return truthy_to(n, t, static_cast<int64_t>(Precision::tf32));
}
std::optional<int64_t> parse_truthy_cublaslt(const char* n, std::string_view t) {
  return truthy_to(n, t, static_cast<int64_t>(BlasBackend::Cublaslt));
}
std::optional<int64_t> parse_truthy_cusolver(const char* n, std::string_view t) {
  return truthy_to(n, t, static_cast<int64_t>(LinalgBackend::Cusolver));
}
std::optional<int64_t> parse_truthy_ck(const char* n, std::string_view t) {
  return truthy_to(n, t, static_cast<int64_t>(RocmFABackend::Ck));
}

const char* vendor_env_alias(const char* name) {
  const std::string_view n = name;
  if (n == "TORCH_BLAS_PREFER_CUBLASLT") return "TORCH_BLAS_PREFER_HIPBLASLT";
  if (n == "TORCH_LINALG_PREFER_CUSOLVER") return "TORCH_LINALG_PREFER_HIPSOLVER";
  return nullptr;
}

std::optional<int64_t> cublas_workspace_config_bytes(std::string_view text) {
  // Scan for ":<int>:<int>" groups; anything between groups is ignored, as
  // cuBLAS does. Every product and sum is checked: a total past int64 is
  // INT64_MAX, which the flag row's validation then refuses with a warning.
  int64_t total = 0;
  bool any = false, overflow = false;
  size_t i = 0;
  auto read_int = [&](size_t& pos, int64_t& out) {
    size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return false;
    auto n = env::parse_int(text.substr(start, pos - start));
    if (!n) overflow = true;  // only digits: too many of them
    out = n.value_or(0);
    return true;
  };
  while (i < text.size()) {
    if (text[i] != ':') {
      ++i;
      continue;
    }
    size_t p = i + 1;
    int64_t size = 0, count = 0;
    if (read_int(p, size) && p < text.size() && text[p] == ':') {
      ++p;
      if (read_int(p, count)) {
        int64_t bytes = 0;
        if (__builtin_mul_overflow(size, int64_t{1024}, &bytes) || __builtin_mul_overflow(bytes, count, &bytes) ||
            __builtin_add_overflow(total, bytes, &total))
          overflow = true;
        any = true;
        i = p;
        continue;
      }
    }
    ++i;
  }
  if (!any) return std::nullopt;
  return overflow ? std::numeric_limits<int64_t>::max() : total;
}

std::optional<int64_t> parse_cublas_workspace_config(const char* name, std::string_view text) {
  auto bytes = cublas_workspace_config_bytes(text);
  if (!bytes) {
    log::warn(std::string("Could not parse ") + name + "='" + std::string(text) +
              "': expected ':SIZE_KiB:COUNT' groups such as ':4096:8'; using the default workspace size");
  }
  return bytes;  // the row's validation bounds it (flags.cpp, load_env)
}

std::optional<int64_t> parse_cublaslt_workspace_kib(const char* name, std::string_view text) {
  auto kib = env::parse_int(text);
  if (!kib || *kib < 0) {
    log::warn(std::string("invalid ") + name + "='" + std::string(text) +
              "': expected a non-negative integer number of KiB; using the default workspace size");
    return std::nullopt;
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<int64_t>(*kib), int64_t{1024}, &bytes))
    bytes = std::numeric_limits<int64_t>::max();
  return bytes;  // the row's validation bounds it (flags.cpp, load_env)
}

std::optional<int64_t> parse_aten_cpu_capability(const char* name, std::string_view text) {
  // Exact, lower-case spellings only, as PyTorch reads ATEN_CPU_CAPABILITY:
  // "AVX2" warns and auto-detects there too.
  const std::string_view t = text;
  if (t == "default") return static_cast<int64_t>(CpuCapabilityCap::Default);
  if (t == "avx2") return static_cast<int64_t>(CpuCapabilityCap::Avx2);
  if (t == "avx512") return static_cast<int64_t>(CpuCapabilityCap::Avx512);
  log::warn(std::string("ignoring invalid value for ") + name + ": " + std::string(text) +
            " (expected default, avx2 or avx512); auto-detecting");
  return std::nullopt;
}

}  // namespace bp::flags
