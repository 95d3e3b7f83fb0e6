// The generic benchmark driver (bench_driver.h).

#include "bench_driver.h"

#include <fmt/core.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "backplane/flags.h"
#include "backplane/runtime.h"

namespace bp::cli::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// bench/shapes/<op>: from the working directory, BACKPLANE_SOURCE_DIR, where
// an installation put them (the wheel's backplane/bin/../bench/shapes,
// `cmake --install`'s <prefix>/bin/../share/backplane/bench/shapes), or beside
// the build directory of this executable (<source>/build/bin/backplane).
fs::path shapes_dir(const std::string& op) {
  std::vector<fs::path> roots = {fs::current_path()};
  if (const char* src = std::getenv("BACKPLANE_SOURCE_DIR")) roots.emplace_back(src);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path up = exe.parent_path().parent_path();
    roots.insert(roots.end(), {up, up / "share" / "backplane", up.parent_path()});
  }
  for (const auto& r : roots)
    if (fs::is_directory(r / "bench" / "shapes" / op)) return r / "bench" / "shapes" / op;
  return {};
}

std::vector<std::string> read_shape_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw_bad_value("bench --shapes", "'" + path.string() + "'", "a shape file");
  std::ifstream in(path);
  if (!in) throw_bad_value("bench --shapes", "'" + path.string() + "'", "a readable shape file");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> shape_lines(const std::string& op, const Options& o) {
  std::vector<std::string> lines = o.shapes;
  const fs::path dir = shapes_dir(op);
  std::vector<fs::path> files;
  for (const auto& set : o.shape_sets) {
    std::error_code ec;
    if (fs::is_regular_file(set, ec)) files.emplace_back(set);
    else if (!dir.empty() && fs::is_regular_file(dir / (set + ".txt"), ec)) files.push_back(dir / (set + ".txt"));
    else throw_bad_value("bench " + op + " --shapes", "'" + set + "'", "a shape file, or a set name in bench/shapes/" + op);
  }
  if (o.shape_sets.empty() && o.shapes.empty()) {
    if (dir.empty()) throw_runtime("bench", "no bench/shapes/" + op + " found; pass --shape");
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

// Note [Interleaved bench rounds]
// A group's contenders (every implementation forced, then the default and
// the autotuned choice) are timed in turns, a slice of calls each per round,
// rather than one after the other: their ratios are the point of the bench,
// and on a shared or virtual machine the speed drifts over seconds (a VM
// here alternates between states 10-25% apart). Timed back to back, two rows
// of the same implementation differed by up to 2.4x in one ResNet-50 run;
// in turns (each round in a new order), every contender sees the same mix
// of states. Each slice starts with one untimed call, which takes the
// re-selection that entering the contender's scope causes and the first
// touch of its private buffers; the median over all timed calls is the
// contender's time.
// In turns, the allocation pattern of one contender also changed the next
// one's time: glibc serves a freed block of up to 32 MiB from its heap (the
// mmap threshold rises to the largest such block freed), but trims the heap
// top once it exceeds twice that, so after im2col's 52 MiB column matrix the
// next contender's 24.5 MiB output came from fresh pages on every call,
// faulted in one by one: oneDNN's 8x3x224x224 7x7 stem took 18 ms instead of
// 8. So the bench fixes the mmap threshold at glibc's own upper bound and
// never trims (steady_heap(), this process only: the library leaves malloc
// alone), which is the state a loop of one call reaches by itself.
struct Contender {
  std::function<std::shared_ptr<void>()> enter;  // the contender's scope: a guard, left when it is dropped
  std::vector<double> times;
  double spent = 0;
  int64_t peak_extra = 0;
};

void time_slice(const Prepared& p, Contender& c, double slice_ms, int min_calls) {
  const std::shared_ptr<void> scope = c.enter();
  const int64_t base = memory_stats(Device::cpu()).current_bytes;
  reset_peak_memory_stats();
  p.run();
  double slice = 0;
  for (int n = 0; n < min_calls || (slice < slice_ms && n < 10000); ++n) {
    const auto t0 = Clock::now();
    p.run();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    c.times.push_back(ms);
    slice += ms;
  }
  c.spent += slice;
  c.peak_extra = std::max(c.peak_extra, memory_stats(Device::cpu()).peak_bytes - base);
}

void steady_heap() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

// At least `repeat` calls and min_time_ms per contender, in rounds of about
// a fifth of min_time_ms (Note [Interleaved bench rounds]).
std::vector<Measured> measure_interleaved(const Prepared& p, std::vector<Contender>& cs, const Options& o) {
  for (Contender& c : cs) {
    const std::shared_ptr<void> scope = c.enter();
    for (int i = 0; i < o.warmup; ++i) p.run();
  }
  constexpr int kRounds = 5;
  const double slice_ms = o.min_time_ms / kRounds;
  const int per_slice = std::max(1, (std::max(1, o.repeat) + kRounds - 1) / kRounds);
  // Each round in a new order (seeded: runs are reproducible), so no
  // contender always follows the same one (whose cache and heap footprint
  // it would otherwise inherit every time).
  std::vector<std::size_t> order(cs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 shuffle_rng(12345);
  for (bool more = true; more;) {
    more = false;
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    for (std::size_t i : order) {
      Contender& c = cs[i];
      if (static_cast<int>(c.times.size()) >= std::max(1, o.repeat) && c.spent >= o.min_time_ms) continue;
      time_slice(p, c, slice_ms, per_slice);
      more = true;
    }
  }
  std::vector<Measured> out;
  for (Contender& c : cs) out.push_back({median(c.times), c.peak_extra});
  return out;
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


// One problem of the op's shape form, for one dtype: prepared again on
// every run (validation and the output allocation count, as for a caller).
Prepared prepare(const ops::OpInfo& op, const std::vector<int64_t>& dims, DType dtype) {
  const ops::Form& form = *op.form;
  std::string storage;
  const ops::EntrySpec& entry = ops::entry(form.entry_for(dims, storage));
  auto args = std::make_shared<ops::Args>(ops::bind(entry, {}, form.make(dims, dtype, Device::cpu(), true)));
  Prepared p;
  p.label = form.label(dims);
  p.flops = entry.prepare(*args).problem.flops;
  p.run = [&entry, args] { (void)ops::run(entry.prepare(*args)); };
  p.explain = [&entry, args] { return ops::explain(entry.prepare(*args)); };
  return p;
}

// --impl names must name implementations (or libraries) of the op.
void check_selection(const std::string& op, const std::vector<dispatch::ImplementationInfo>& impls,
                     const std::vector<std::string>& only) {
  std::string known;
  for (const auto& i : impls) known += (known.empty() ? "" : ", ") + i.name;
  for (const std::string& name : only) {
    bool found = false;
    for (const auto& i : impls) found = found || i.name == name || i.library == name;
    if (!found) throw_bad_value("bench " + op + " --impl", "'" + name + "'", "an implementation or library of " + op + ": " + known);
  }
}

}  // namespace

nlohmann::json run(const ops::OpInfo& op, const Options& o) {
  if (!op.form) throw_bad_value("bench", "'" + op.name + "'", "an op with a shape form");
  if (!(o.min_time_ms >= 0) || o.min_time_ms > 3.6e6)
    throw_bad_value("bench --min-time", std::to_string(o.min_time_ms), "a number of milliseconds in [0, 3600000]");
  for (int t : o.threads)
    if (t < 1) throw_bad_value("bench --threads", std::to_string(t), "thread counts >= 1");
  steady_heap();  // Note [Interleaved bench rounds]
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json summary = nlohmann::json::array();
  std::vector<int> thread_counts = o.threads.empty() ? std::vector<int>{get_num_threads()} : o.threads;
  const auto impls = dispatch::list_implementations(op.name);
  check_selection(op.name, impls, o.only);
  std::vector<DType> dtypes;
  for (const std::string& dt : o.dtypes) dtypes.push_back(parse_dtype(dt));
  std::vector<std::pair<std::string, std::vector<int64_t>>> problems;
  for (const std::string& line : shape_lines(op.name, o))
    problems.emplace_back(line, op.form->parse_line(line, "bench " + op.name + " shape"));
  if (problems.empty()) throw_bad_value("bench " + op.name, "no shapes", "at least one shape line");
  for (const auto& [line, shape] : problems) {
    for (std::size_t di = 0; di < dtypes.size(); ++di) {
      const std::string& dt = o.dtypes[di];
      const Prepared p = prepare(op, shape, dtypes[di]);
      for (int threads : thread_counts) {
        set_num_threads(threads);
        double fastest = 0, best_peer = 0;
        // The contenders: each accepting implementation forced, then the default choice and the autotuned one.
        struct Entry {
          std::string name, library;
          bool choice = false, tuned = false;
        };
        std::vector<Entry> entries;
        std::vector<Contender> contenders;
        for (const auto& info : impls) {
          if (!info.built || !info.available || !selected(info.name, o.only)) continue;
          if (info.library == "ref" && p.flops > o.reference_limit_gflop * 1e9) continue;
          {
            dispatch::ImplementationsGuard only(op.name, {info.name});
            if (p.explain().chosen == nullptr) continue;  // rejects this problem (explain says why)
          }
          entries.push_back({info.name, info.library});
          const std::string name = info.name;
          contenders.push_back({[&op, name]() -> std::shared_ptr<void> {
            return std::make_shared<dispatch::ImplementationsGuard>(op.name, std::vector<std::string>{name});
          }});
        }
        nlohmann::json choice = {{"shape", p.label}, {"dtype", dt}, {"threads", threads}};
        for (const bool tuned : {false, true}) {
          backends::cpu::flags_guard g({.benchmark = tuned});
          p.run();  // lets autotuning time and cache its winner before the measurement
          const dispatch::Decision d = p.explain();
          const std::string chosen = d.chosen ? d.chosen->name() : "none";
          entries.push_back({std::string(tuned ? "autotuned" : "default") + " -> " + chosen,
                             tuned ? "(autotuned)" : "(default)", true, tuned});
          choice[tuned ? "autotuned" : "default"] = chosen;
          contenders.push_back({[tuned]() -> std::shared_ptr<void> {
            return std::make_shared<backends::cpu::flags_guard>(backends::cpu::flags_options{.benchmark = tuned});
          }});
        }
        const std::vector<Measured> measured = measure_interleaved(p, contenders, o);
        std::vector<nlohmann::json> group;
        for (std::size_t i = 0; i < entries.size(); ++i) {
          const Entry& e = entries[i];
          const Measured& m = measured[i];
          group.push_back(row(p.label, dt, threads, e.name, e.library, m, p.flops));
          if (fastest == 0 || m.ms < fastest) fastest = m.ms;
          const auto& peers = op.bench.peer_libraries;
          if (!e.choice && std::find(peers.begin(), peers.end(), e.library) != peers.end() &&
              (best_peer == 0 || m.ms < best_peer))
            best_peer = m.ms;
          if (e.choice) choice[e.tuned ? "autotuned_ms" : "default_ms"] = m.ms;
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
  if (rows.empty())
    throw_bad_value("bench " + op.name, "no implementation accepted any of the problems",
                    "a selection (--impl) and shapes some built implementation accepts (see backplane explain)");
  nlohmann::json report = {{"op", op.name}, {"peers", op.bench.peer_text}, {"rows", rows}, {"summary", summary}};
  if (op.bench.extras) {
    nlohmann::json extras;
    for (const auto& [name, value] : op.bench.extras()) extras[name] = value;
    report["extras"][op.bench.extras_title] = extras;
  }
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
