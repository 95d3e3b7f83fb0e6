// `backplane explain matmul --m M --n N --k K [--batch B] [--dtype f32]
// [--transpose-a] [--transpose-b] [--json]`: the decision table for one call,
// with the process's flags (env vars included) as they are.

#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "backplane/ops/matmul.h"
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

}  // namespace

void add_explain_command(CLI::App& app) {
  struct Options {
    int64_t m = 64, n = 64, k = 64, batch = 0;
    std::string dtype = "f32", device = "cpu";
    bool transpose_a = false, transpose_b = false, json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("explain", "Show which implementation an op call would use, and why");
  cmd->require_subcommand(1);
  CLI::App* mm = cmd->add_subcommand("matmul", "matmul of [batch,] m x k and k x n");
  mm->add_option("--m", o->m, "rows of a")->check(CLI::NonNegativeNumber);
  mm->add_option("--n", o->n, "columns of b")->check(CLI::NonNegativeNumber);
  mm->add_option("--k", o->k, "inner dimension")->check(CLI::NonNegativeNumber);
  mm->add_option("--batch", o->batch, "batch size (0: plain 2-D)")->check(CLI::NonNegativeNumber);
  mm->add_option("--dtype", o->dtype, "f32, f64, f16 or bf16");
  mm->add_option("--device", o->device, "cpu or cuda[:N] (where the operands live)");
  mm->add_flag("--transpose-a", o->transpose_a, "pass a as a transposed view");
  mm->add_flag("--transpose-b", o->transpose_b, "pass b as a transposed view");
  mm->add_flag("--json", o->json, "print JSON");
  mm->callback([o] {
    const DType dtype = parse_dtype(o->dtype);
    const Device device = parse_device(o->device);
    auto make = [&](int64_t rows, int64_t cols, bool transposed) {
      Shape shape = transposed ? Shape{cols, rows} : Shape{rows, cols};
      if (o->batch > 0) shape.insert(shape.begin(), o->batch);
      const Tensor t = Tensor::zeros(shape, dtype).to(device);
      return transposed ? t.T() : t;
    };
    const dispatch::Decision d = explain_matmul(make(o->m, o->k, o->transpose_a), make(o->k, o->n, o->transpose_b));
    if (o->json) {
      fmt::print("{}\n", decision_json(d).dump(2));
    } else {
      fmt::print("{}", d.text());
      if (d.chosen == nullptr) fmt::print("  => no implementation accepts this problem\n");
    }
    std::fflush(stdout);
  });
  add_explain_sdpa(*cmd);
}

}  // namespace bp::cli
