// `backplane bench <op> [--shapes SET|FILE ...] [--shape "M N K" ...]
// [--dtype f32,bf16] [--threads 1,2] [--impl NAME ...] [--warmup N]
// [--repeat N] [--min-time MS] [--json]`: every built implementation side by side
// (bench_driver.h).

#include <fmt/core.h>

#include <memory>

#include "bench_driver.h"
#include "commands.h"

namespace bp::cli {

void add_bench_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "Time every implementation of an op side by side");
  cmd->require_subcommand(1);
  for (bench::Plugin& plugin : bench::bench_plugins()) {
    auto o = std::make_shared<bench::Options>();
    auto shared = std::make_shared<bench::Plugin>(std::move(plugin));
    CLI::App* sub = cmd->add_subcommand(shared->op, "Benchmark " + shared->op);
    sub->add_option("--shapes", o->shape_sets, "shape sets: names in bench/shapes/" + shared->op + "/ or files");
    sub->add_option("--shape", o->shapes, "one problem (" + shared->shape_help + ")");
    sub->add_option("--dtype", o->dtypes, "dtypes (comma-separated)")->delimiter(',');
    sub->add_option("--threads", o->threads, "thread counts (comma-separated)")->delimiter(',');
    sub->add_option("--impl", o->only, "only these implementations (names or library prefixes)")->delimiter(',');
    sub->add_option("--warmup", o->warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
    sub->add_option("--repeat", o->repeat, "timed runs (the median is reported)")->check(CLI::PositiveNumber);
    sub->add_option("--min-time", o->min_time_ms, "keep timing until this many milliseconds are spent (default 200)")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--reference-limit", o->reference_limit_gflop, "skip ref:* above this many GFLOP");
    sub->add_flag("--json", o->json, "print JSON");
    sub->callback([o, shared] {
      const nlohmann::json report = bench::run(*shared, *o);
      fmt::print("{}", o->json ? report.dump(2) + "\n" : bench::render_text(report));
      std::fflush(stdout);
    });
  }
}

}  // namespace bp::cli
