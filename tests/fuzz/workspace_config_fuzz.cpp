// CUBLAS_WORKSPACE_CONFIG and CUBLASLT_WORKSPACE_SIZE text: no overflow (the
// sanitizers), a result that is never negative, and CUBLASLT_WORKSPACE_SIZE
// equal to 1024 x the number read (saturated) when the text is a number.

#include <charconv>
#include <cstdint>
#include <limits>
#include <string_view>

#include "core/vendor_env.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bp::fuzz::quiet();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto bytes = bp::flags::cublas_workspace_config_bytes(text)) {
    BP_FUZZ_CHECK(*bytes >= 0);
    BP_FUZZ_CHECK(text.find(':') != std::string_view::npos);
  }
  bp::flags::parse_cublas_workspace_config("CUBLAS_WORKSPACE_CONFIG", text);
  const auto lt = bp::flags::parse_cublaslt_workspace_kib("CUBLASLT_WORKSPACE_SIZE", text);
  long long kib = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), kib);
  const bool number = !text.empty() && ec == std::errc() && end == text.data() + text.size() && kib >= 0;
  BP_FUZZ_CHECK(lt.has_value() == number);
  if (lt) {
    const __int128 want = static_cast<__int128>(kib) * 1024;
    const __int128 top = std::numeric_limits<int64_t>::max();
    BP_FUZZ_CHECK(*lt == static_cast<int64_t>(want > top ? top : want));
  }
  return 0;
}
