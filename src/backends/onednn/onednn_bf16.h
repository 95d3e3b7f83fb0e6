#pragma once
// Whether this CPU's oneDNN computes with bf16. oneDNN 2.6 has bf16 matmul
// and convolution only from AVX512_CORE up; on an AVX2 machine creating a
// bf16 primitive fails. The ops ask here before choosing bf16 arithmetic (the
// "bf16" precision permission then goes unused) or accepting bf16 operands.
// has_bf16 is compiled only with oneDNN; built_with_bf16 everywhere.

#include <string>

#include "backplane/dispatch.h"

namespace bp::backends::onednn {

bool has_bf16();           // asked of oneDNN once, by creating a 1x1x1 bf16 matmul
std::string cpu_isa_name();  // the ISA oneDNN generates code for here ("avx2", ...)

// The check "bf16 support" of an op's oneDNN row: bf16 operands need has_bf16().
template <class Params>
dispatch::Check<Params> bf16_support_check() {
  return {"bf16 support", [](const Params& p, dispatch::Reasons& r) {
            return p.dtype != DType::bf16 || has_bf16() ||
                   r.fail("a CPU where oneDNN has bf16 arithmetic (AVX512_CORE or newer)",
                          [] { return "none here (oneDNN's ISA: " + cpu_isa_name() + ")"; });
          }};
}

}  // namespace bp::backends::onednn

#include "backplane_build_config.h"

namespace bp::backends::onednn {

// has_bf16() where the build has oneDNN, false where it does not: for code
// compiled in both kinds of build (the explain notes).
inline bool built_with_bf16() {
#if BP_HAVE_ONEDNN
  return has_bf16();
#else
  return false;
#endif
}

}  // namespace bp::backends::onednn
