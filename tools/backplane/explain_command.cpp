// `backplane explain <entry> [--<dim> N ...] [--arg name=value ...]
// [--dtype f32] [--device cpu] [--json]`: the decision table of one call of
// any declared op entry (backplane/op_spec.h), with the process's flags
// (env vars included) as they are. The op's shape form gives the --<dim>
// options (`explain matmul --m 512 --n 4096 --k 11008`); --arg sets any
// argument by name, with its text form (ops::parse_value): tensors as
// shapes ("a=64x128:T" is stored transposed, "attn_mask=1024x1024:bool"), numbers, true/false,
// strings, "none".

#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "backplane/op_spec.h"
#include "commands.h"

namespace bp::cli {
namespace {

nlohmann::json decision_json(const dispatch::Decision& d) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : d.rows) {
    nlohmann::json reasons = nlohmann::json::array();
    for (const auto& reason : r.reasons) reasons.push_back(reason.text());
    rows.push_back({{"implementation", r.implementation}, {"status", dispatch::status_name(r.status)},
                    {"reasons", reasons}});
  }
  return {{"op", d.op}, {"problem", d.problem}, {"chosen", d.chosen ? d.chosen->name() : ""}, {"how", d.how},
          {"rows", rows}, {"notes", d.notes}};
}

std::string option_name(std::string dim) {
  for (char& c : dim)
    if (c == '_') c = '-';
  return "--" + dim;
}

struct Options {
  std::vector<int64_t> dims;   // the form's, at their fallbacks until given
  std::vector<std::string> args;
  std::string dtype = "f32", device = "cpu";
  bool json = false;
};

void explain_entry(const ops::EntrySpec& entry, const Options& o) {
  const DType dtype = parse_dtype(o.dtype);
  const Device device = parse_device(o.device);
  std::vector<std::pair<std::string, ops::ArgValue>> keywords;
  const ops::OpInfo& op = ops::op_of(entry);
  if (op.form && op.form->entry == entry.name) keywords = op.form->make(o.dims, dtype, device, false);
  for (const std::string& assignment : o.args) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw_bad_value("explain " + entry.name + " --arg", "'" + assignment + "'", "name=value; the arguments are " +
                                                                                      entry.signature());
    const std::string name = assignment.substr(0, eq);
    const ops::ArgSpec* spec = nullptr;
    for (const ops::ArgSpec& a : entry.args)
      if (a.name == name) spec = &a;
    if (spec == nullptr)
      throw_bad_value("explain " + entry.name + " --arg", "'" + name + "'",
                      "one of the arguments of " + entry.signature());
    ops::ArgValue value = ops::parse_value(*spec, assignment.substr(eq + 1), dtype, device);
    std::erase_if(keywords, [&](const auto& kv) { return kv.first == name; });
    keywords.emplace_back(name, std::move(value));
  }
  const dispatch::Decision d = ops::explain(entry.prepare(ops::bind(entry, {}, std::move(keywords))));
  if (o.json) {
    fmt::print("{}\n", decision_json(d).dump(2));
  } else {
    fmt::print("{}", d.text());
    if (d.chosen == nullptr) fmt::print("  => no implementation accepts this problem\n");
  }
  std::fflush(stdout);
}

}  // namespace

void add_explain_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("explain", "Show which implementation an op call would use, and why");
  cmd->require_subcommand(1);
  for (const ops::EntrySpec* entry : ops::all_entries()) {
    auto o = std::make_shared<Options>();
    const ops::OpInfo& op = ops::op_of(*entry);
    CLI::App* sub = cmd->add_subcommand(entry->name, entry->signature());
    if (op.form && op.form->entry == entry->name) {
      for (const ops::FormDim& d : op.form->dims) o->dims.push_back(d.fallback);
      for (std::size_t i = 0; i < op.form->dims.size(); ++i) {
        const ops::FormDim& d = op.form->dims[i];
        sub->add_option(option_name(d.name), o->dims[i], d.help + " (default " + std::to_string(d.fallback) + ")")
            ->check(CLI::NonNegativeNumber);
      }
    }
    sub->add_option("--arg", o->args, "name=value for any argument of " + entry->signature() +
                                          " (tensors as shapes: 64x128, 64x128:bf16, 64x128:T stored transposed)");
    sub->add_option("--dtype", o->dtype, "the tensors' dtype: f32, f64, f16 or bf16");
    sub->add_option("--device", o->device, "cpu or cuda[:N] (where the tensors live)");
    sub->add_flag("--json", o->json, "print JSON");
    sub->callback([entry, o] { explain_entry(*entry, *o); });
  }
}

}  // namespace bp::cli
