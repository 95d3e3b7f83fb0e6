// The bf16 question of onednn_bf16.h, answered by oneDNN itself rather than
// by an ISA table, so a newer oneDNN (bf16 on AVX2-VNNI-2, say) answers right.

#include "backends/onednn/onednn_bf16.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>

namespace bp::backends::onednn {

bool has_bf16() {
  static const bool supported = [] {
    using dnnl::memory;
    try {
      const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      const memory::desc a({1, 1}, memory::data_type::bf16, memory::format_tag::ab);
      const memory::desc c({1, 1}, memory::data_type::f32, memory::format_tag::ab);
      dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, a, c), engine);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return supported;
}

std::string cpu_isa_name() {
  const char* isa = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());
  return isa ? isa : "unknown";
}

}  // namespace bp::backends::onednn
