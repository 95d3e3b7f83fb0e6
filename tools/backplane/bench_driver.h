#pragma once
// The benchmark driver behind `backplane bench <op>` (DESIGN.md §8): runs
// every built implementation of an op side by side in one process on the
// same inputs (warm-up, then the median of several runs, the contenders
// timed in turns: Note [Interleaved bench rounds]), plus the default
// choice and the autotuned choice, and reports time, GFLOP/s, peak extra
// memory and ratios. Every op with a shape form (backplane/op_spec.h) has
// it, with nothing written here per op: a shape line becomes the form's
// inputs, the op's BenchSpec names the peers, and shape sets live in
// bench/shapes/<op>/*.txt (one problem per line, '#' comments).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backplane/dispatch.h"
#include "backplane/op_spec.h"

namespace bp::cli::bench {

// One problem with its inputs allocated, ready to run under any scope.
struct Prepared {
  std::string label;             // "512x4096x11008"
  double flops = 0;              // per run
  std::function<void()> run;     // one call of the op (dispatch decides)
  std::function<dispatch::Decision()> explain;
};

struct Options {
  std::vector<std::string> shape_sets;  // names under bench/shapes/<op>/ or file paths; empty = all
  std::vector<std::string> shapes;      // literal shape lines
  std::vector<std::string> dtypes = {"f32", "bf16"};
  std::vector<int> threads;             // empty = the current count
  std::vector<std::string> only;        // implementation names or prefixes; empty = all built
  int warmup = 2, repeat = 5;
  double min_time_ms = 200;             // keep timing past `repeat` runs until this much time is spent
  double reference_limit_gflop = 1.0;   // ref:* skipped above this much work
  bool json = false;
};

// Runs the benchmark of an op with a shape form and returns the report
// (rows, summary, extras).
nlohmann::json run(const ops::OpInfo& op, const Options& options);
// The report as a table.
std::string render_text(const nlohmann::json& report);

}  // namespace bp::cli::bench
