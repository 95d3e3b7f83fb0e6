// The text view of `backplane info`: aligned columns, ✓/✗, one line per
// backend and per flag so that `backplane info | grep cudnn` finds them.

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "info_report.h"

namespace bp::cli::info {
namespace {

using json = nlohmann::ordered_json;

const char* mark(bool yes) { return yes ? "✓" : "✗"; }

// Pads by characters the terminal shows; fmt's width would count the bytes
// of "✓" differently across fmt versions, so marks are never padded.
std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string trim_right(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string join(const json& items, const char* sep) {
  std::string out;
  for (const auto& it : items) {
    if (!out.empty()) out += sep;
    out += it.get<std::string>();
  }
  return out;
}

void render_header(const json& r, std::string& out) {
  const json& b = r["build"];
  out += fmt::format("Backplane {}  ({}, {} build", r["version"].get<std::string>(),
                     b["compiler"].get<std::string>(), b["build_type"].get<std::string>());
  if (!b["cuda_toolkit"].get<std::string>().empty())
    out += fmt::format(", CUDA toolkit {}", b["cuda_toolkit"].get<std::string>());
  out += ")\nBuilt with:";
  for (const auto& [name, yes] : b["with"].items()) out += fmt::format("  {} {}", mark(yes.get<bool>()), name);
  out += "\n";
}

void render_capability(const json& r, std::string& out) {
  const json& c = r["cpu_capability"];
  out += "\nCPU capability\n";
  out += fmt::format("  detected  {}  (AVX512_BF16: {})\n", pad(c["detected"].get<std::string>(), 8),
                     c["avx512_bf16"].get<bool>() ? "yes" : "no");
  out += fmt::format("  cap       {}  (source: {}; env {})\n", pad(c["cap"].get<std::string>(), 8),
                     c["cap_source"].get<std::string>(), join(c["cap_env"], " or "));
  out += fmt::format("  chosen    {}\n", c["chosen"].get<std::string>());
}

void render_backends(const json& r, std::string& out) {
  size_t name_w = 4, version_w = 7;
  for (const auto& b : r["backends"]) {
    name_w = std::max(name_w, b["name"].get<std::string>().size());
    version_w = std::max(version_w, b["version"].get<std::string>().size());
  }
  out += fmt::format("\nBackends\n    {}  built  avail  {}  notes\n", pad("name", name_w), pad("version", version_w));
  for (const auto& b : r["backends"]) {
    const bool available = b["available"].get<bool>();
    std::string notes = b["reason"].get<std::string>();
    for (const auto& d : b["devices"]) {
      if (!notes.empty()) notes += "; ";
      notes += fmt::format("[{}] {} ({})", d["index"].get<int>(), d["name"].get<std::string>(),
                           d["description"].get<std::string>());
    }
    out += trim_right(fmt::format("  {} {}  {}      {}      {}  {}", mark(available),
                                  pad(b["name"].get<std::string>(), name_w), mark(b["built"].get<bool>()),
                                  mark(available), pad(b["version"].get<std::string>(), version_w), notes)) +
           "\n";
    const std::string indent(6 + name_w, ' ');
    if (!b["features"].empty()) out += fmt::format("{}features: {}\n", indent, join(b["features"], " "));
    if (!b["details"].empty()) {
      std::string line;
      for (const auto& [k, v] : b["details"].items()) {
        if (!line.empty()) line += " · ";
        line += k + ": " + v.get<std::string>();
      }
      out += indent + line + "\n";
    }
  }
}

// One line per flag: path, value, source, doc, then the PyTorch / vendor env
// var if there is one. The native env var is the path's spelling
// (BACKPLANE_<PATH>), so the header says it once instead of on every line.
// A second line says who reads the flag: which ops' implementations (their
// checks and runs), or "nothing yet" for a knob no op consults.
void render_flags(const json& r, std::string& out) {
  constexpr size_t kMaxValueWidth = 16;  // a longer value overflows its own line only
  size_t path_w = 4, value_w = 5;
  for (const auto& f : r["flags"]) {
    path_w = std::max(path_w, f["path"].get<std::string>().size());
    const size_t v = f["value"].get<std::string>().size();
    if (v <= kMaxValueWidth) value_w = std::max(value_w, v);
  }
  out += "\nFlags (each is also read from env BACKPLANE_<FLAG>, dots as underscores, e.g. BACKPLANE_CUDNN_BENCHMARK)\n";
  out += fmt::format("  {}  {}  {}  doc\n", pad("flag", path_w), pad("value", value_w), pad("source", 7));
  for (const auto& f : r["flags"]) {
    std::string line = fmt::format("  {}  {}  {}  {}", pad(f["path"].get<std::string>(), path_w),
                                   pad(f["value"].get<std::string>(), value_w),
                                   pad(f["source"].get<std::string>(), 7), f["doc"].get<std::string>());
    const json& env = f["env"];
    if (env.size() > 1) line += "  [also " + join(json(env.begin() + 1, env.end()), ", ") + "]";
    out += line + "\n";
    const json& readers = f["read_by"];
    out += std::string(path_w + 4, ' ') + "read by: " +
           (readers.empty() ? std::string("nothing yet (state only: no op consults it)") : join(readers, "; ")) + "\n";
  }
}

}  // namespace

std::string render_text(const json& r) {
  std::string out;
  render_header(r, out);
  render_capability(r, out);
  render_backends(r, out);
  render_flags(r, out);
  if (r.contains("selftest")) {
    const json& s = r["selftest"];
    out += fmt::format("\nCUDA selftest  {} {}\n", s["ran"].get<bool>() ? mark(s["ok"].get<bool>()) : "-",
                       s["message"].get<std::string>());
  }
  return out;
}

}  // namespace bp::cli::info
