// The generic benchmark driver (bench_driver.h).

#include "bench_driver.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "backplane/flags.h"
#include "backplane/runtime.h"

namespace bp::cli::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// bench/shapes/<op>: from the working directory, BACKPLANE_SOURCE_DIR, or
// beside the build directory of this executable.
fs::path shapes_dir(const std::string& op) {
  std::vector<fs::path> roots = {fs::current_path()};
  if (const char* src = std::getenv("BACKPLANE_SOURCE_DIR")) roots.emplace_back(src);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) roots.push_back(exe.parent_path().parent_path().parent_path());
  for (const auto& r : roots)
    if (fs::is_directory(r / "bench" / "shapes" / op)) return r / "bench" / "shapes" / op;
  return {};
}

std::vector<std::string> read_shape_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw_bad_value("bench", path.string(), "a readable shape file");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> shape_lines(const Plugin& plugin, const Options& o) {
  std::vector<std::string> lines = o.shapes;
  const fs::path dir = shapes_dir(plugin.op);
  std::vector<fs::path> files;
  for (const auto& set : o.shape_sets) {
    if (fs::exists(set)) files.emplace_back(set);
    else if (!dir.empty() && fs::exists(dir / (set + ".txt"))) files.push_back(dir / (set + ".txt"));
    else throw_bad_value("bench " + plugin.op + " --shapes", set, "a file, or a set name in bench/shapes/" + plugin.op);
  }
  if (o.shape_sets.empty() && o.shapes.empty()) {
    if (dir.empty()) throw_runtime("bench", "no bench/shapes/" + plugin.op + " found; pass --shape");
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".txt") files.push_back(e.path());
    std::sort(files.begin(), files.end());
  }
  for (const auto& f : files)
    for (auto& l : read_shape_file(f)) lines.push_back(std::move(l));
  return lines;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Measured {
  double ms = 0;
  int64_t peak_extra = 0;
};

Measured measure(const Prepared& p, const Options& o) {
  for (int i = 0; i < o.warmup; ++i) p.run();
  const int64_t base = memory_stats(Device::cpu()).current_bytes;
  reset_peak_memory_stats();
  // At least `repeat` runs and at least min_time_ms in all: a median of 5
  // runs of a 0.1 ms problem says more about the scheduler than the kernel.
  std::vector<double> times;
  double spent = 0;
  while (static_cast<int>(times.size()) < std::max(1, o.repeat) || (spent < o.min_time_ms && times.size() < 10000)) {
    const auto t0 = Clock::now();
    p.run();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    spent += times.back();
  }
  return {median(times), memory_stats(Device::cpu()).peak_bytes - base};
}

bool selected(const std::string& name, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  for (const auto& o : only)
    if (name == o || name.rfind(o + ":", 0) == 0) return true;
  return false;
}

nlohmann::json row(const std::string& shape, const std::string& dtype, int threads, const std::string& impl,
                   const std::string& library, const Measured& m, double flops) {
  return {{"shape", shape}, {"dtype", dtype}, {"threads", threads}, {"implementation", impl}, {"library", library},
          {"median_ms", m.ms}, {"gflops", m.ms > 0 ? flops / (m.ms * 1e6) : 0.0}, {"peak_extra_bytes", m.peak_extra}};
}

}  // namespace

Tensor random_tensor(const Shape& shape, DType dtype, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(gen);
  return Tensor::from_vector(v, shape).to(dtype);
}

std::vector<int64_t> parse_dims(const std::string& line, std::size_t count, const std::string& what,
                                const std::string& form) {
  std::string s = line;
  for (char& c : s)
    if (c == 'x' || c == 'X' || c == ',') c = ' ';
  std::istringstream in(s);
  std::vector<int64_t> dims;
  int64_t d;
  while (in >> d) dims.push_back(d);
  bool ok = dims.size() == count && in.eof();
  for (int64_t x : dims) ok = ok && x >= 1;
  if (!ok) throw_bad_value(what, "'" + line + "'", form + " with positive integers");
  return dims;
}

std::vector<Plugin> bench_plugins() { return {bench_plugin_matmul(), bench_plugin_sdpa()}; }

nlohmann::json run(const Plugin& plugin, const Options& o) {
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json summary = nlohmann::json::array();
  std::vector<int> thread_counts = o.threads.empty() ? std::vector<int>{get_num_threads()} : o.threads;
  const auto impls = dispatch::list_implementations(plugin.op);
  for (const std::string& line : shape_lines(plugin, o)) {
    const std::vector<int64_t> shape = plugin.parse_shape(line);
    for (const std::string& dt : o.dtypes) {
      const DType dtype = parse_dtype(dt);
      const Prepared p = plugin.prepare(shape, dtype);
      for (int threads : thread_counts) {
        set_num_threads(threads);
        double fastest = 0, best_peer = 0;
        std::vector<nlohmann::json> group;
        for (const auto& info : impls) {
          if (!info.built || !info.available || !selected(info.name, o.only)) continue;
          if (info.library == "ref" && p.flops > o.reference_limit_gflop * 1e9) continue;
          dispatch::ImplementationsGuard only(plugin.op, {info.name});
          if (p.explain().chosen == nullptr) continue;  // rejects this problem (explain says why)
          const Measured m = measure(p, o);
          group.push_back(row(p.label, dt, threads, info.name, info.library, m, p.flops));
          if (fastest == 0 || m.ms < fastest) fastest = m.ms;
          const auto& peers = plugin.peer_libraries;
          const bool peer = std::find(peers.begin(), peers.end(), info.library) != peers.end();
          if (peer && (best_peer == 0 || m.ms < best_peer)) best_peer = m.ms;
        }
        // The default choice, then the autotuned one.
        nlohmann::json choice = {{"shape", p.label}, {"dtype", dt}, {"threads", threads}};
        for (const bool tuned : {false, true}) {
          backends::cpu::flags_guard g({.benchmark = tuned});
          p.run();  // lets autotuning time and cache its winner before the measurement
          const dispatch::Decision d = p.explain();
          const std::string chosen = d.chosen ? d.chosen->name() : "none";
          const Measured m = measure(p, o);
          group.push_back(row(p.label, dt, threads, std::string(tuned ? "autotuned" : "default") + " -> " + chosen,
                              tuned ? "(autotuned)" : "(default)", m, p.flops));
          if (fastest == 0 || m.ms < fastest) fastest = m.ms;
          choice[tuned ? "autotuned" : "default"] = chosen;
          choice[tuned ? "autotuned_ms" : "default_ms"] = m.ms;
        }
        for (auto& r : group) {
          const double ms = r["median_ms"].get<double>();
          r["vs_fastest"] = ms > 0 ? fastest / ms : 0.0;
          r["vs_best_peer"] = best_peer > 0 && ms > 0 ? best_peer / ms : 0.0;
          rows.push_back(r);
        }
        choice["fastest_ms"] = fastest;
        choice["default_within"] = fastest / choice["default_ms"].get<double>();
        choice["autotuned_within"] = fastest / choice["autotuned_ms"].get<double>();
        summary.push_back(choice);
      }
    }
  }
  nlohmann::json report = {{"op", plugin.op}, {"peers", plugin.peer_text}, {"rows", rows}, {"summary", summary}};
  if (plugin.extras) report["extras"] = plugin.extras();
  return report;
}

std::string render_text(const nlohmann::json& report) {
  std::string out = fmt::format("{:<18} {:<5} {:>3}  {:<36} {:>10} {:>9} {:>10} {:>8} {:>8}\n", "shape", "dtype",
                                "thr", "implementation", "median ms", "GFLOP/s", "peak MiB", "vs peer", "vs best");
  for (const auto& r : report["rows"])
    out += fmt::format("{:<18} {:<5} {:>3}  {:<36} {:>10.4f} {:>9.1f} {:>10.2f} {:>7.2f}x {:>7.2f}x\n",
                       r["shape"].get<std::string>(), r["dtype"].get<std::string>(), r["threads"].get<int>(),
                       r["implementation"].get<std::string>(), r["median_ms"].get<double>(),
                       r["gflops"].get<double>(), r["peak_extra_bytes"].get<int64_t>() / 1048576.0,
                       r["vs_best_peer"].get<double>(), r["vs_fastest"].get<double>());
  out += "\nvs peer: best peer time / this time (>1 is faster than " + report["peers"].get<std::string>() +
         "); vs best: fastest / this time\n\nsummary (default and autotuned choice vs the fastest):\n";
  for (const auto& s : report["summary"])
    out += fmt::format("  {:<18} {:<5} {} thr: default {:<22} {:5.1f}%   autotuned {:<22} {:5.1f}%\n",
                       s["shape"].get<std::string>(), s["dtype"].get<std::string>(), s["threads"].get<int>(),
                       s["default"].get<std::string>(), 100 * s["default_within"].get<double>(),
                       s["autotuned"].get<std::string>(), 100 * s["autotuned_within"].get<double>());
  if (report.contains("extras"))
    for (const auto& [k, v] : report["extras"].items()) out += fmt::format("{}: {}\n", k, v.dump());
  return out;
}

}  // namespace bp::cli::bench
