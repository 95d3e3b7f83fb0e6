// The texts and readings behind the check building blocks
// (backplane/dispatch_checks.h).

#include "backplane/dispatch_checks.h"

namespace bp::dispatch::checks::detail {

std::string dtypes_text(const std::vector<DType>& allowed) {
  std::string out;
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    if (i > 0) out += i + 1 == allowed.size() ? " or " : ", ";
    out += dtype_name(allowed[i]);
  }
  return out;
}

std::string flag_text(flags::Id id) { return flags::row(id).path() + " = " + flags::format(id, flags::get_raw(id)); }

bool capability_ok(backends::cpu::CpuCapability need, Reasons& r) {
  const backends::cpu::CpuCapability have = backends::cpu::cpu_capability();
  if (static_cast<int>(have) >= static_cast<int>(need)) return true;
  return fail_with(
      r,
      [&] {
        return std::string("cpu capability ") + backends::cpu::capability_name(need) +
               " or higher (capped by BACKPLANE_CPU_CAPABILITY / ATEN_CPU_CAPABILITY)";
      },
      [&] { return std::string(backends::cpu::capability_name(have)); });
}

bool precision_ok(precision::Backend b, precision::Op op, flags::Precision want, Reasons& r) {
  const flags::Precision got = precision::resolved(b, op);
  if (got == want) return true;
  return fail_with(
      r,
      [&] {
        const char* name = flags::Precision_names[static_cast<int>(want)];
        const char* policy = want == flags::Precision::bf16 ? "medium" : "high";
        const char* backend = b == precision::Backend::cuda ? "cuda" : b == precision::Backend::mkldnn ? "mkldnn" : "generic";
        const char* ops[] = {"all", "conv", "rnn", "matmul"};
        return std::string("fp32 precision '") + name + "' permitted for (" + backend + ", " +
               ops[static_cast<int>(op)] + ") (set_float32_matmul_precision('" + policy + "') or " +
               flags::row(precision::node(b, op)).path() + " = '" + name + "')";
      },
      [&] {
        return "'" + std::string(flags::Precision_names[static_cast<int>(got)]) + "' (" +
               precision::get_float32_matmul_precision() + ")";
      });
}

}  // namespace bp::dispatch::checks::detail
