// `backplane bench <op> [--shapes SET|FILE ...] [--shape "M N K" ...]
// [--dtype f32,bf16] [--threads 1,2] [--impl NAME ...] [--warmup N]
// [--repeat N] [--min-time MS] [--json]`: every built implementation side by
// side (bench_driver.h), for every op with a shape form.

#include <fmt/core.h>

#include <memory>

#include "bench_driver.h"
#include "commands.h"

namespace bp::cli {

void add_bench_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "Time every implementation of an op side by side");
  cmd->require_subcommand(1);
  for (const ops::OpInfo* op : ops::all_ops()) {
    if (!op->form) continue;
    auto o = std::make_shared<bench::Options>();
    std::string line;
    for (std::size_t i = 0; i < op->form->line_dims; ++i) line += (i ? " " : "") + op->form->dims[i].name;
    CLI::App* sub = cmd->add_subcommand(op->name, "Benchmark " + op->name);
    sub->add_option("--shapes", o->shape_sets, "shape sets: names in bench/shapes/" + op->name + "/ or files");
    sub->add_option("--shape", o->shapes, "one problem (" + line + ")");
    sub->add_option("--dtype", o->dtypes, "dtypes (comma-separated)")->delimiter(',');
    sub->add_option("--threads", o->threads, "thread counts (comma-separated)")->delimiter(',');
    sub->add_option("--impl", o->only, "only these implementations (names or library prefixes)")->delimiter(',');
    sub->add_option("--warmup", o->warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
    sub->add_option("--repeat", o->repeat, "timed runs (the median is reported)")->check(CLI::PositiveNumber);
    sub->add_option("--min-time", o->min_time_ms, "keep timing until this many milliseconds are spent (default 200)");
    sub->add_option("--reference-limit", o->reference_limit_gflop, "skip ref:* above this many GFLOP");
    sub->add_flag("--json", o->json, "print JSON");
    sub->callback([o, op] {
      const nlohmann::json report = bench::run(*op, *o);
      fmt::print("{}", o->json ? report.dump(2) + "\n" : bench::render_text(report));
      std::fflush(stdout);
    });
  }
}

}  // namespace bp::cli
