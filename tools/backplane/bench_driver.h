#pragma once
// The benchmark driver behind `backplane bench <op>` (DESIGN.md §8): runs
// every built implementation of an op side by side in one process on the
// same inputs (warm-up, then the median of several runs), plus the default
// choice and the autotuned choice, and reports time, GFLOP/s, peak extra
// memory and ratios.
//
// To plug in an op: 1. write bench_<op>.cpp defining bench_plugin_<op>()
// (how a shape line becomes prepared inputs); 2. declare it below; 3. list it
// in bench_plugins() in bench_driver.cpp; 4. put shape sets in
// bench/shapes/<op>/*.txt (one problem per line, '#' comments).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backplane/dispatch.h"

namespace bp::cli::bench {

// One problem with its inputs allocated, ready to run under any scope.
struct Prepared {
  std::string label;             // "512x4096x11008"
  double flops = 0;              // per run
  std::function<void()> run;     // one call of the op (dispatch decides)
  std::function<dispatch::Decision()> explain;
};

struct Plugin {
  std::string op;     // dispatch op name: list_implementations(op)
  std::string shape_help;  // what a shape line holds ("m n k")
  // Parses one shape line ("64 64 64" or "64x64x64"); ValueError when malformed.
  std::function<std::vector<int64_t>(const std::string& line)> parse_shape;
  std::function<Prepared(const std::vector<int64_t>& shape, DType dtype)> prepare;
  // Extra measurements printed after the table (dispatch overhead, ...).
  std::function<nlohmann::json()> extras;
  // The libraries the "vs peer" column compares against, and how the
  // legend names them ("OpenBLAS/oneDNN").
  std::vector<std::string> peer_libraries;
  std::string peer_text;
};

// Helpers the plug-ins share (bench_driver.cpp).
// Uniform random values in [-1, 1) of `dtype`, reproducible for a seed.
Tensor random_tensor(const Shape& shape, DType dtype, unsigned seed);
// The positive integers of a shape line ("m n k", "MxNxK", "1,2,3"); exactly
// `count` of them, else a ValueError naming `what` and the expected `form`.
std::vector<int64_t> parse_dims(const std::string& line, std::size_t count, const std::string& what,
                                const std::string& form);

Plugin bench_plugin_matmul();  // bench_matmul.cpp
Plugin bench_plugin_sdpa();    // bench_sdpa.cpp

// Every op with a plug-in.
std::vector<Plugin> bench_plugins();

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

// Runs the benchmark and returns the report (rows, summary, extras).
nlohmann::json run(const Plugin& plugin, const Options& options);
// The report as a table.
std::string render_text(const nlohmann::json& report);

}  // namespace bp::cli::bench
