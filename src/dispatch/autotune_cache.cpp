// The autotune cache: winners by problem key, least recently used first out,
// saved and loaded as text (Note [Autotune key] in backplane/dispatch.h).
//
// File format, one entry per line after a "# backplane autotune cache v2"
// header, fields separated by tabs:
//   op  device  threads  dtype  layout  dims  flags  libraries  winner  time_ms
//   matmul  cpu  2  f32  0x0  1,64,64,64  cpu.preferred_blas_library=default;...  cpu=?,openblas=0.3.21  builtin:avx512  0.012
// A tuned detail (Note [Tuned details] in backplane/dispatch.h) is a line
// whose op field names its implementation too and whose winner field holds
// the detail:
//   conv/cudnn:conv  cuda:0  2  f32  0x0  ...  cudnn=91900  engine 7 ...  0.041
// dims holds at most Problem::kMaxDims numbers (v2: 16; v1 files, whose
// keys had at most 8, are dropped with one warning and replaced on save).
// Loaded lines wait as text until their op is defined and looked up, so a
// file may hold entries of ops that a later library (backplane_cuda) adds.
//
// The file is user data (DESIGN.md §10, Note [User files] in
// core/user_file.h): read only when it is a regular file of at most
// kMaxFileBytes; saved by merging with what is on disk under a lock, into a
// fresh temporary file renamed over it; never written over a file that is
// not an autotune cache.

#include <cstdlib>
#include <list>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "backplane/log.h"
#include "backplane/runtime.h"
#include "core/user_file.h"
#include "dispatch/autotune_key.h"

namespace bp::dispatch {
namespace detail {
namespace {

constexpr const char* kHeaderPrefix = "# backplane autotune cache v";
constexpr int kVersion = 2;
constexpr std::size_t kFields = 10;
constexpr std::size_t kKeyFields = 8;  // op .. libraries: what identifies an entry
// 4096 entries (the default bound) take about 1 MiB.
constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;

std::string header() { return kHeaderPrefix + std::to_string(kVersion); }

struct Entry {
  Key key;
  const Implementation* winner;  // a detail's owner for detail entries
  std::string line;  // the entry as saved (built once, when stored)
  std::string detail;  // a tuned detail's text (empty for dispatch's winners)
};

struct Cache {
  std::mutex mutex;
  std::list<Entry> lru;  // most recently used first
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> index;
  std::vector<std::string> pending;  // loaded lines whose op has not been looked up yet
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: the exit-time save may run after static destructors
  return *c;
}

int64_t limit() { return flags::get_raw(flags::Id::generic_autotune_cache_max_size); }

void trim(Cache& c, int64_t max) {
  while (static_cast<int64_t>(c.lru.size()) > max) {
    c.index.erase(c.lru.back().key);
    c.lru.pop_back();
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(s);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::string join_dims(const Key& k) {
  std::string out;
  for (int i = 0; i < k.ndims; ++i) out += (i ? "," : "") + std::to_string(k.dims[i]);
  return out;
}

std::string flags_text(const Op& op, const Key& k) {
  std::string out;
  auto ids = op.key_flags(k.device.type);
  for (int i = 0; i < k.nflags; ++i)
    out += (i ? ";" : "") + flags::row(ids[i]).path() + "=" + flags::format(ids[i], k.flag_values[i]);
  return out;
}

std::string layout_hex(uint32_t layout) {
  std::ostringstream o;
  o << "0x" << std::hex << layout;
  return o.str();
}

// The op field: the op, and for a tuned detail its owner ("conv/cudnn:conv").
std::string op_field(const Key& k) { return k.owner ? k.op->name() + "/" + k.owner->name() : k.op->name(); }

std::string entry_line(const Key& k, const std::string& winner, double time_ms) {
  std::ostringstream o;
  o << op_field(k) << '\t' << k.device.str() << '\t' << k.threads << '\t' << dtype_short_name(k.dtype) << '\t' << layout_hex(k.layout)
    << '\t' << join_dims(k) << '\t' << flags_text(*k.op, k) << '\t' << k.op->library_versions(k.device.type)
    << '\t' << winner << '\t' << time_ms;
  return o.str();
}

void insert(Cache& c, const Key& key, const Implementation& winner, std::string line, std::string detail = {}) {
  const int64_t max = limit();
  if (max == 0) return;  // caching disabled
  auto it = c.index.find(key);
  if (it != c.index.end()) {
    c.lru.erase(it->second);
    c.index.erase(it);
  }
  c.lru.push_front(Entry{key, &winner, std::move(line), std::move(detail)});
  c.index.emplace(key, c.lru.begin());
  trim(c, max);
}

// Parses one saved line into a key for `op`; false when it belongs to
// another op, other library versions or other flags (stale, skipped).
bool parse_line(const std::string& line, const Op& op, Key& key, const Implementation*& winner, std::string& detail) {
  const auto f = split(line, '\t');
  if (f.size() != kFields) throw_bad_value("autotune_cache.load", line, "10 tab-separated fields (see autotune_cache.cpp)");
  const Implementation* owner = nullptr;
  if (f[0] != op.name()) {  // a tuned detail: "<op>/<implementation>"
    if (f[0].compare(0, op.name().size() + 1, op.name() + "/") != 0) return false;
    owner = op.find(std::string_view(f[0]).substr(op.name().size() + 1));
    if (owner == nullptr) return false;
  }
  key = Key{};
  key.op = &op;
  key.owner = owner;
  key.device = parse_device(f[1]);
  key.threads = std::stoi(f[2]);
  key.dtype = parse_dtype(f[3]);
  key.layout = static_cast<uint32_t>(std::stoul(f[4], nullptr, 16));
  const auto dims = split(f[5], ',');
  if (dims.size() > static_cast<std::size_t>(Problem::kMaxDims))
    throw_bad_value("autotune_cache.load", f[5], "at most " + std::to_string(Problem::kMaxDims) + " dims");
  key.ndims = static_cast<int>(dims.size());
  for (int i = 0; i < key.ndims; ++i) key.dims[i] = std::stoll(dims[i]);
  if (f[7] != op.library_versions(key.device.type)) return false;
  // Flags: exactly the op's key flags, in its order.
  const auto ids = op.key_flags(key.device.type);
  const auto pairs = split(f[6], ';');
  if (pairs.size() != ids.size()) return false;
  key.nflags = static_cast<int>(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto eq = pairs[i].find('=');
    if (eq == std::string::npos || pairs[i].substr(0, eq) != flags::row(ids[i]).path()) return false;
    key.flag_values[i] = flags::parse(ids[i], pairs[i].substr(eq + 1));
  }
  if (owner) {
    winner = owner;
    detail = f[8];
    return true;
  }
  winner = op.find(f[8]);
  return winner != nullptr;
}

// Whether a saved line belongs to `op` (its winners or tuned details).
bool line_of(const std::string& line, const Op& op) {
  return line.compare(0, op.name().size() + 1, op.name() + "\t") == 0 ||
         line.compare(0, op.name().size() + 1, op.name() + "/") == 0;
}

// The device type a saved line is for (its second field).
std::optional<DeviceType> line_device(const std::string& line) {
  const auto f = split(line, '\t');
  if (f.size() < 2) return std::nullopt;
  try {
    return parse_device(f[1]).type;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Takes the pending lines of `op` for problems on `device`. Lines of another
// device type wait for a lookup on that device: parsing one reads that
// device's library versions, which for CUDA means loading backplane_cuda,
// which must never happen under the cache's lock (loading fills slots, and
// filling clears cache entries).
void adopt_pending(Cache& c, const Op& op, DeviceType device) {
  if (c.pending.empty()) return;
  std::vector<std::string> rest;
  for (std::string& line : c.pending) {
    if (line_device(line) != device && line_device(line).has_value()) {
      rest.push_back(std::move(line));
      continue;
    }
    Key key;
    const Implementation* winner = nullptr;
    std::string detail;
    bool taken = false;
    try {
      taken = parse_line(line, op, key, winner, detail);
    } catch (const std::exception&) {
      taken = false;  // checked at load; a flag table change makes it stale
    }
    if (taken) {
      insert(c, key, *winner, line, std::move(detail));
    } else if (!line_of(line, op)) {
      rest.push_back(std::move(line));  // another op's: keep waiting
    }
  }
  c.pending = std::move(rest);
}

// What a file holds: entries of this format, or an older / newer format
// (ours, but nothing this version can use).
struct FileContent {
  int version = kVersion;
  std::vector<std::string> lines;
};

// Parses a cache file's text. Throws when it is not an autotune cache (the
// first line is not our header; an empty file is an empty cache). strict:
// a malformed line rejects the file (load); else it is skipped (merging).
FileContent parse_file(const std::string& text, const std::string& path, bool strict,
                       const char* op = "autotune_cache.load") {
  FileContent out;
  if (text.empty()) return out;
  std::size_t pos = text.find('\n');
  const std::string first = text.substr(0, pos);
  const std::string prefix = kHeaderPrefix;
  const std::string number = first.compare(0, prefix.size(), prefix) == 0 ? first.substr(prefix.size()) : "";
  if (number.empty() || number.size() > 6 || number.find_first_not_of("0123456789") != std::string::npos)
    throw_bad_value(op, "'" + path + "', whose first line is not an autotune cache header",
                    std::string("an autotune cache file, starting with '") + header() + "'" +
                        (std::string(op) == "autotune_cache.save" ? " (Backplane never replaces another file)" : ""));
  out.version = std::stoi(number);
  if (out.version != kVersion) return out;
  while (pos != std::string::npos && pos < text.size()) {
    const std::size_t next = text.find('\n', pos + 1);
    std::string line = text.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    pos = next;
    if (line.empty()) continue;
    if (split(line, '\t').size() != kFields) {
      if (!strict) continue;
      throw_bad_value(op, "'" + path + "': line '" + line + "'", "10 tab-separated fields per line");
    }
    out.lines.push_back(std::move(line));
  }
  return out;
}

// The lines of a file this version can use; an older or newer format gives
// none, with one warning.
std::vector<std::string> usable_lines(const std::string& text, const std::string& path) {
  FileContent f = parse_file(text, path, true);
  if (f.version < kVersion) {
    log::warn("autotune cache '" + path + "' has the older format v" + std::to_string(f.version) +
              " (this version writes v" + std::to_string(kVersion) + "); its entries are dropped and the next save replaces it");
  } else if (f.version > kVersion) {
    log::warn("autotune cache '" + path + "' has the newer format v" + std::to_string(f.version) +
              " (this version reads v" + std::to_string(kVersion) + "); its entries are ignored and it is not saved over");
  }
  return std::move(f.lines);
}

std::vector<std::string> read_lines(const std::string& path) {
  auto text = user_file::read_regular(path, kMaxFileBytes, "autotune_cache.load");
  if (!text) throw_runtime("autotune_cache.load", "autotune_cache.load: cannot read '" + path + "': no such file");
  return usable_lines(*text, path);
}

// "op\tdevice\t...\tlibraries": the part of a line that identifies its entry.
std::string_view entry_key(const std::string& line) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < kKeyFields && pos != std::string::npos; ++i) pos = line.find('\t', pos + (i ? 1 : 0));
  return std::string_view(line).substr(0, pos);
}

// The file's new text: the entries on disk that we do not hold (they were
// saved by another process meanwhile, so they keep their place as the
// least recently used), then ours, least recently used first; the newest
// `max` when the cache is bounded.
std::string merged_text(const std::optional<std::string>& current, const std::string& path,
                        const std::vector<std::string>& ours, int64_t max) {
  std::vector<std::string_view> lines;
  std::unordered_set<std::string_view> held;
  for (const auto& l : ours) held.insert(entry_key(l));
  FileContent disk;
  if (current) disk = parse_file(*current, path, false);
  if (disk.version == kVersion)  // older formats are ours too, but their entries cannot be used
    for (const auto& l : disk.lines)
      if (!held.count(entry_key(l))) lines.push_back(l);
  for (const auto& l : ours) lines.push_back(l);
  std::size_t first = 0;
  if (max > 0 && lines.size() > static_cast<std::size_t>(max)) first = lines.size() - static_cast<std::size_t>(max);
  std::string out = header() + "\n";
  for (std::size_t i = first; i < lines.size(); ++i) (out += lines[i]) += '\n';
  return out;
}

// Refuses to save over a file that is not an autotune cache, or over one of
// a newer format.
void accept_file(const std::string& text, const std::string& path) {
  const FileContent f = parse_file(text, path, false, "autotune_cache.save");
  if (f.version > kVersion)
    throw_runtime("autotune_cache.save", "autotune_cache.save: '" + path + "' is an autotune cache of the newer format v" +
                                             std::to_string(f.version) + "; refusing to replace it with v" +
                                             std::to_string(kVersion));
}

// BACKPLANE_AUTOTUNE_CACHE: read at load, written at exit. A file that
// cannot be read is ignored with one warning and left untouched (no save at
// exit); a missing one is created at exit.
const bool env_file_connected = [] {
  const char* path = std::getenv("BACKPLANE_AUTOTUNE_CACHE");
  if (path == nullptr || *path == '\0') return false;
  try {
    auto text = user_file::read_regular(path, kMaxFileBytes, "BACKPLANE_AUTOTUNE_CACHE");
    if (text) cache().pending = usable_lines(*text, path);
  } catch (const std::exception& e) {
    log::warn(std::string("BACKPLANE_AUTOTUNE_CACHE: ") + e.what() + " (ignored; the file is left untouched)");
    return false;
  }
  // The path read at start-up is the one saved to, whatever the env says by then.
  static const std::string* saved_path = new std::string(path);  // never destroyed: atexit runs after destructors
  std::atexit([] {
    try {
      autotune_cache::save(*saved_path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[backplane] warning: BACKPLANE_AUTOTUNE_CACHE: %s\n", e.what());
    }
  });
  return true;
}();

const bool max_size_connected = [] {
  flags::on_change(flags::Id::generic_autotune_cache_max_size, "the autotune cache (trims to the new size)", [](int64_t max) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    trim(c, max);
  });
  return true;
}();

}  // namespace

std::size_t KeyHash::operator()(const Key& k) const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(reinterpret_cast<uintptr_t>(k.op));
  mix(static_cast<uint64_t>(k.device.type) << 32 | static_cast<uint32_t>(k.device.index));
  mix(static_cast<uint64_t>(k.dtype) << 32 | k.layout);
  mix(static_cast<uint64_t>(k.threads));
  mix(k.allowed);
  for (int i = 0; i < k.ndims; ++i) mix(static_cast<uint64_t>(k.dims[i]));
  for (int i = 0; i < k.nflags; ++i) mix(static_cast<uint64_t>(k.flag_values[i]));
  return static_cast<std::size_t>(h);
}

Key make_key(const Op& op, const Problem& p, uint64_t allowed) {
  Key k;
  k.op = &op;
  k.device = p.device;
  k.dtype = p.dtype;
  k.layout = p.layout;
  k.threads = get_num_threads();
  k.ndims = p.ndims;
  for (int i = 0; i < p.ndims; ++i) k.dims[i] = p.dims[i];
  k.allowed = allowed;
  const auto ids = op.key_flags(p.device.type);
  k.nflags = static_cast<int>(ids.size());
  for (int i = 0; i < k.nflags; ++i) k.flag_values[i] = flags::get_raw(ids[i]);
  return k;
}

const Implementation* cache_lookup(const Key& key) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.index.find(key);
  if (it == c.index.end()) {
    adopt_pending(c, *key.op, key.device.type);
    it = c.index.find(key);
    if (it == c.index.end()) return nullptr;
  }
  if (it->second != c.lru.begin()) c.lru.splice(c.lru.begin(), c.lru, it->second);
  return it->second->winner;
}

void cache_store(const Key& key, const Implementation& winner, double time_ms) {
  std::string line = entry_line(key, winner.name(), time_ms);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  insert(c, key, winner, std::move(line));
}

std::optional<std::string> cache_lookup_detail(const Key& key) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.index.find(key);
  if (it == c.index.end()) {
    adopt_pending(c, *key.op, key.device.type);
    it = c.index.find(key);
    if (it == c.index.end()) return std::nullopt;
  }
  if (it->second != c.lru.begin()) c.lru.splice(c.lru.begin(), c.lru, it->second);
  return it->second->detail;
}

void cache_store_detail(const Key& key, const std::string& detail, double time_ms) {
  // One line per entry, tab-separated: a detail holds neither.
  std::string text = detail;
  for (char& ch : text)
    if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
  std::string line = entry_line(key, text, time_ms);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  insert(c, key, *key.owner, std::move(line), std::move(text));
}

void forget_op(const Op& op, DeviceType device) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto it = c.lru.begin(); it != c.lru.end();) {
    if (it->key.op == &op && it->key.device.type == device) {
      c.index.erase(it->key);
      it = c.lru.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace detail

std::optional<std::string> tuned_detail(const Op& op, const Problem& problem, const Implementation& impl) {
  detail::Key key = detail::make_key(op, problem, ~0ull);
  key.owner = &impl;
  return detail::cache_lookup_detail(key);
}

void store_tuned_detail(const Op& op, const Problem& problem, const Implementation& impl, const std::string& text,
                        double time_ms) {
  if (text.empty()) throw_bad_value("store_tuned_detail", "an empty detail", "a non-empty detail");
  detail::Key key = detail::make_key(op, problem, ~0ull);
  key.owner = &impl;
  detail::cache_store_detail(key, text, time_ms);
}

namespace autotune_cache {

int64_t size() {
  auto& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return static_cast<int64_t>(c.lru.size());
}

int64_t max_size() { return detail::limit(); }
void set_max_size(int64_t n) { flags::set_raw(flags::Id::generic_autotune_cache_max_size, n); }

void clear() {
  auto& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.lru.clear();
  c.index.clear();
  c.pending.clear();
}

void save(const std::string& path) {
  const char* op = "autotune_cache.save";
  user_file::check_path(path, op);
  auto& c = detail::cache();
  std::vector<std::string> lines;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    // Least recently used first, so a load into a smaller cache keeps the newest.
    lines = c.pending;
    for (auto it = c.lru.rbegin(); it != c.lru.rend(); ++it)
      if (it->key.allowed == ~0ull) lines.push_back(it->line);  // restricted runs are not general answers
  }
  const int64_t max = detail::limit();
  user_file::replace(
      path, detail::kMaxFileBytes, op, [&](const std::string& current) { detail::accept_file(current, path); },
      [&](const std::optional<std::string>& current) { return detail::merged_text(current, path, lines, max); });
}

int64_t load(const std::string& path) {
  std::vector<std::string> lines = detail::read_lines(path);
  auto& c = detail::cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  const std::size_t before = c.lru.size() + c.pending.size();
  c.pending.insert(c.pending.end(), lines.begin(), lines.end());
  for (const std::string& name : op_names()) detail::adopt_pending(c, get_op(name), DeviceType::cpu);
  return static_cast<int64_t>(c.lru.size() + c.pending.size()) - static_cast<int64_t>(before);
}

}  // namespace autotune_cache
}  // namespace bp::dispatch
