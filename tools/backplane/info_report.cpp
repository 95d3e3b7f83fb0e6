// Collects the facts `backplane info` shows (info_report.h).

#include "info_report.h"

#include "backends/cuda/cuda_loader.h"
#include "backplane/backends/cpu.h"
#include "backplane/backends/cuda.h"
#include "backplane/backends/onednn.h"
#include "backplane/backends/registry.h"
#include "backplane/dispatch.h"
#include "backplane/flags.h"
#include "backplane/op_spec.h"
#include "backplane/version.h"
#include "backplane/build_info.h"

namespace bp::cli::info {
namespace {

using json = nlohmann::ordered_json;

json build_section() {
  const BuildInfo& info = build_info();
  json built = json::object();
  for (const BuiltBackend& b : info.backends) built[b.name] = b.built;
  return {{"compiler", info.compiler},
          {"build_type", info.build_type},
          {"cuda_toolkit", info.cuda_toolkit},
          {"with", built}};
}

json cpu_capability_section() {
  namespace cpu = backends::cpu;
  const flags::Id cap = flags::Id::cpu_capability;
  const flags::Row& row = flags::row(cap);
  json env = json::array({row.env});
  if (row.vendor_env) env.push_back(row.vendor_env);
  return {{"detected", cpu::capability_name(cpu::detected_cpu_capability())},
          {"cap", flags::format(cap, flags::get_raw(cap))},
          {"cap_source", flags::source_name(flags::source(cap))},
          {"cap_env", env},
          {"chosen", cpu::get_cpu_capability()},
          {"avx512_bf16", cpu::has_avx512_bf16()}};
}

json backend_json(const backends::BackendInfo& b) {
  json devices = json::array();
  for (const auto& d : b.devices)
    devices.push_back({{"index", d.index}, {"name", d.name}, {"description", d.description}});
  json details = json::object();  // ordered_json: keeps the display order
  for (const auto& [k, v] : b.details) details[k] = v;
  return {{"name", b.name},         {"built", b.built},       {"available", b.available},
          {"reason", b.reason},     {"version", b.version},   {"devices", devices},
          {"features", b.features}, {"details", details}};
}

json flag_json(const flags::Row& r) {
  json env = json::array({r.env});
  if (r.vendor_env) env.push_back(r.vendor_env);
  return {{"path", r.path()},
          {"cpp_name", r.cpp_name},
          {"value", flags::format(r.id, flags::get_raw(r.id))},
          {"default", flags::format(r.id, r.default_value)},
          {"source", flags::source_name(flags::source(r.id))},
          {"allowed", flags::allowed_text(r.id)},
          {"env", env},
          {"doc", r.doc},
          {"read_by", dispatch::flag_readers(r.id)}};
}

}  // namespace

json gather() {
  backends::mkldnn::connect_verbose_flag();
  ops::ensure_ops();  // the "read by" column covers every op
  json report;
  report["version"] = BACKPLANE_VERSION_STRING;
  report["build"] = build_section();
  report["cpu_capability"] = cpu_capability_section();
  report["backends"] = json::array();
  for (const auto& b : backends::list_backends()) report["backends"].push_back(backend_json(b));
  report["flags"] = json::array();
  for (const auto& r : flags::rows()) report["flags"].push_back(flag_json(r));
  return report;
}

json run_selftest() {
  const auto r = backends::cuda::selftest();
  return {{"ran", r.ran}, {"ok", r.ok}, {"message", r.message}};
}

}  // namespace bp::cli::info
