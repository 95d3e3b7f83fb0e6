// The flag table at run time: storage, env parsing, validation, scopes.
// Semantics: Note [Flag resolution and scopes] in backplane/flags.h.

#include "backplane/flags.h"

#include <array>
#include <atomic>
#include <bitset>
#include <mutex>
#include <unordered_map>

#include "backplane/error.h"
#include "backplane/log.h"
#include "core/env.h"
#include "core/flags_env.h"
#include "core/vendor_env.h"

namespace bp::flags {
namespace {

std::string upper_env_name(std::string_view module, std::string_view name) {
  std::string out = "BACKPLANE_";
  for (char c : module) out += (c == '.') ? '_' : static_cast<char>(std::toupper(c));
  if (!module.empty()) out += '_';
  for (char c : name) out += static_cast<char>(std::toupper(c));
  return out;
}

using VendorParser = std::optional<int64_t> (*)(const char* env_name, std::string_view text);

struct RowDef {
  Row row;
  VendorParser vendor_parse;
};

std::vector<RowDef> build_rows() {
  std::vector<RowDef> out;
#define BP_FLAG(ID, MOD, NS, PY, NAME, CTYPE, DOMAIN, DEFAULT, VENDOR_ENV, VENDOR_PARSE, KIND, DOC) \
  out.push_back(RowDef{Row{Id::ID, #ID, PY, #NAME, "bp::backends::" #NS "::" #NAME, DOMAIN,                \
                           static_cast<int64_t>(DEFAULT), upper_env_name(PY, #NAME), VENDOR_ENV,      \
                           static_cast<unsigned>(KIND), DOC},                                       \
                       VENDOR_PARSE});
#include "backplane/detail/flags.def"
#undef BP_FLAG
  return out;
}

// Row-based forms of validate / format / parse / allowed_text. They never
// consult global(), so the table's constructor can use them while reading
// the environment.
void validate_row(const Row& r, int64_t v);
std::string format_row(const Row& r, int64_t v);
int64_t parse_row(const Row& r, std::string_view text);
std::string allowed_row(const Row& r);

// Note [Env parsing]: the value a row takes from its env texts (native,
// then the vendor name, then the vendor name's ROCm spelling, as PyTorch
// reads them), or nullopt to keep the default. The native name wins over
// the vendor names; every text passes the row's validation (issue 10:
// CUBLASLT_WORKSPACE_SIZE=1 PiB was taken). Warns once per bad text; a bad
// vendor text falls through to the next name.
std::optional<int64_t> vendor_value_of(const RowDef& d, const char* name, const std::string& text) {
  const Row& r = d.row;
  try {
    if (d.vendor_parse == nullptr) return parse_row(r, text);
    const std::optional<int64_t> v = d.vendor_parse(name, text);
    if (v) validate_row(r, *v);
    return v;
  } catch (const Error& e) {
    log::warn(std::string("ignoring ") + name + "=" + text + " (" + r.path() + " = " + e.value() +
              "): expected " + e.allowed() + "; using the default " + format_row(r, r.default_value));
  }
  return std::nullopt;
}

std::optional<int64_t> env_value_of(const RowDef& d, const std::optional<std::string>& native,
                                    const std::optional<std::string>& vendor,
                                    const std::optional<std::string>& vendor_alias) {
  const Row& r = d.row;
  if (native) {
    try {
      return parse_row(r, *native);
    } catch (const Error& e) {
      log::warn("ignoring " + r.env + "=" + *native + ": expected " + e.allowed() + "; using the default " +
                format_row(r, r.default_value));
    }
    return std::nullopt;
  }
  if (r.vendor_env == nullptr) return std::nullopt;
  if (vendor)
    if (auto v = vendor_value_of(d, r.vendor_env, *vendor)) return v;
  const char* alias = vendor_env_alias(r.vendor_env);
  if (alias != nullptr && vendor_alias) return vendor_value_of(d, alias, *vendor_alias);
  return std::nullopt;
}

struct Global {
  std::vector<RowDef> defs;
  std::vector<Row> rows;
  std::unordered_map<std::string, Id> by_path;
  std::array<std::atomic<int64_t>, kCount> value{};
  std::array<std::atomic<int>, kCount> source{};
  std::atomic<uint64_t> epoch{0};
  std::atomic<bool> frozen{false};

  Global() : defs(build_rows()) {
    for (const auto& d : defs) rows.push_back(d.row);
    for (const auto& r : rows) by_path.emplace(r.path(), r.id);
    for (int i = 0; i < kCount; ++i) {
      value[i].store(rows[i].default_value);
      source[i].store(static_cast<int>(Source::Default));
    }
    for (int i = 0; i < kCount; ++i) load_env(i);
  }

  void load_env(int i) {
    const Row& r = rows[i];
    const char* alias = r.vendor_env ? vendor_env_alias(r.vendor_env) : nullptr;
    if (auto v = env_value_of(defs[i], env::get(r.env.c_str()), r.vendor_env ? env::get(r.vendor_env) : std::nullopt,
                              alias ? env::get(alias) : std::nullopt)) {
      value[i].store(*v);
      source[i].store(static_cast<int>(Source::Env));
    }
  }
};

// Change hooks live apart from the table so that registering one (often
// from a static initialiser) does not read the environment: the table is
// built at the first flag access, when warnings can reach the right handler.
struct Hooks {
  std::mutex mutex;
  std::array<std::vector<std::function<void(int64_t)>>, kCount> by_flag;
  std::array<std::vector<std::string>, kCount> readers;
  bool table_ready = false;
};

Hooks& hooks() {
  static Hooks h;
  return h;
}

std::vector<std::function<void(int64_t)>> hooks_of(int i) {
  std::lock_guard<std::mutex> lock(hooks().mutex);
  return hooks().by_flag[i];
}

// The table once global() has built and announced it: get_raw's path, read
// several times per op call, is then one load instead of a call through the
// static's guard and the announcement check.
std::atomic<Global*> g_table{nullptr};

Global& global() {
  static Global g;
  // Once the table exists (env applied), hooks registered before it learn
  // the start-up values. Hooks may read flags: the state flips before they
  // run, so those reads return the table without announcing again.
  static std::atomic<bool> announced{false};
  if (!announced.load(std::memory_order_acquire) && !announced.exchange(true)) {
    {
      std::lock_guard<std::mutex> lock(hooks().mutex);
      hooks().table_ready = true;
    }
    for (int i = 0; i < kCount; ++i)
      for (auto& h : hooks_of(i)) h(g.value[i].load());
    g_table.store(&g, std::memory_order_release);
  }
  return g;
}

struct Tls {
  std::array<int64_t, kCount> value{};
  std::bitset<kCount> set;
  int depth = 0;
  ReadLog* log = nullptr;  // the innermost ReadLog of this thread
};
thread_local Tls tls;

std::string join_names(const Domain& d) {
  std::string out;
  for (int i = 0; i < d.count; ++i) {
    if (i) out += ", ";
    out += d.names[i];
  }
  return out;
}

// Aliases, listed after the names: " (also: hipblas, hipblaslt)".
std::string alias_suffix(const Domain& d) {
  if (d.alias_count == 0) return "";
  std::string out = " (also: ";
  for (int i = 0; i < d.alias_count; ++i) out += (i ? ", " : "") + std::string(d.aliases[i].name);
  return out + ")";
}

}  // namespace

std::string Row::path() const {
  std::string m = module;
  return m.empty() ? std::string(name) : m + "." + name;
}

const char* source_name(Source s) {
  switch (s) {
    case Source::Default: return "default";
    case Source::Env: return "env";
    case Source::Api: return "api";
  }
  return "?";
}

std::span<const Row> rows() { return global().rows; }
const Row& row(Id id) { return global().rows[static_cast<int>(id)]; }

std::optional<Id> find(std::string_view path) {
  auto& g = global();
  auto it = g.by_path.find(std::string(path));
  if (it == g.by_path.end()) return std::nullopt;
  return it->second;
}

Id lookup(std::string_view path) {
  if (auto id = find(path)) return *id;
  std::string known;
  for (const auto& r : rows()) known += (known.empty() ? "" : ", ") + r.path();
  throw Error(ErrorKind::Value, "unknown flag '" + std::string(path) + "'; known flags: " + known, "flags",
              std::string(path), known);
}

namespace {

std::string allowed_row(const Row& r) {
  const Domain& d = r.domain;
  switch (d.type) {
    case DomainType::Bool: return "a bool";
    case DomainType::Int:
      if (d.max == std::numeric_limits<int64_t>::max()) return "an integer >= " + std::to_string(d.min);
      return "an integer in [" + std::to_string(d.min) + ", " + std::to_string(d.max) + "]";
    case DomainType::Enum: return "one of: " + join_names(d) + alias_suffix(d);
    case DomainType::Order: return "a permutation of: " + join_names(d);
  }
  return "?";
}

void validate_row(const Row& r, int64_t v) {
  const Id id = r.id;
  const Domain& d = r.domain;
  bool ok = true;
  switch (d.type) {
    case DomainType::Bool: ok = (v == 0 || v == 1); break;
    case DomainType::Int: ok = (v >= d.min && v <= d.max); break;
    case DomainType::Enum: ok = (v >= 0 && v < d.count); break;
    case DomainType::Order: {
      unsigned seen = 0;
      for (int i = 0; i < d.count; ++i) seen |= 1u << order_at(v, i);
      ok = (seen == (1u << d.count) - 1) && (v >> (3 * d.count)) == 0;
      break;
    }
  }
  if (!ok) throw_bad_value(r.path(), format_row(r, v), allowed_row(r));
  // Note [fp32 precision tree]: CUDA has no bf16 math mode.
  const bool cuda_node = id == Id::cudnn_fp32_precision || id == Id::cudnn_conv_fp32_precision ||
                         id == Id::cudnn_rnn_fp32_precision || id == Id::cuda_matmul_fp32_precision;
  if (cuda_node && v == static_cast<int64_t>(Precision::bf16)) {
    throw Error(ErrorKind::Value, r.path() + ": backend 'cuda' does not support precision 'bf16'", r.path(),
                "bf16", "one of: none, ieee, tf32");
  }
}

std::string format_row(const Row& r, int64_t v) {
  const Domain& d = r.domain;
  switch (d.type) {
    case DomainType::Bool: return v == 0 ? "False" : (v == 1 ? "True" : std::to_string(v));
    case DomainType::Int: return std::to_string(v);
    case DomainType::Enum: return (v >= 0 && v < d.count) ? d.names[v] : std::to_string(v);
    case DomainType::Order: {
      std::string out;
      for (int i = 0; i < d.count; ++i) {
        int k = order_at(v, i);
        out += (i ? "," : "");
        out += (k < d.count) ? d.names[k] : "?";
      }
      return out;
    }
  }
  return std::to_string(v);
}

// Note [Env parsing] in core/env.h: names are case-sensitive, so say so
// when the text would match in another case.
std::string allowed_with_case_hint(const Row& r, std::string_view text) {
  const Domain& d = r.domain;
  if (d.type != DomainType::Enum && d.type != DomainType::Order) return allowed_row(r);
  const std::string lowered = env::lower(text);
  bool other_case = false;
  for (int i = 0; i < d.count; ++i) other_case |= lowered.find(d.names[i]) != std::string::npos;
  return allowed_row(r) + (other_case && lowered != text ? " (names are case-sensitive)" : "");
}

int64_t parse_row(const Row& r, std::string_view text) {
  const Domain& d = r.domain;
  auto bad = [&]() -> int64_t {
    throw_bad_value(r.path(), "'" + std::string(text) + "'", allowed_with_case_hint(r, text));
  };
  switch (d.type) {
    case DomainType::Bool: {
      auto b = env::parse_bool(text);
      if (!b) bad();
      return *b ? 1 : 0;
    }
    case DomainType::Int: {
      auto n = env::parse_int(text);
      if (!n) bad();
      validate_row(r, *n);
      return *n;
    }
    case DomainType::Enum: {
      // Exact case, as the setters (issue 10); aliases ("hipblaslt") too; and
      // the row's own rules (no bf16 on CUDA nodes), as the setter applies them.
      if (auto v = enum_value(d, text)) {
        validate_row(r, *v);
        return *v;
      }
      return bad();
    }
    case DomainType::Order: {
      int order[8];
      int n = 0;
      std::string_view rest = text;
      while (!rest.empty() && n < d.count) {
        auto comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        int k = -1;
        for (int i = 0; i < d.count; ++i)
          if (item == d.names[i]) k = i;
        if (k < 0) bad();
        order[n++] = k;
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      }
      if (n != d.count || !rest.empty()) bad();
      int64_t v = pack_order(order, n);
      validate_row(r, v);
      return v;
    }
  }
  return bad();
}

}  // namespace

std::optional<int> enum_value(const Domain& d, std::string_view name) {
  for (int i = 0; i < d.count; ++i)
    if (name == d.names[i]) return i;
  for (int i = 0; i < d.alias_count; ++i)
    if (name == d.aliases[i].name) return d.aliases[i].value;
  return std::nullopt;
}

std::string allowed_text(Id id) { return allowed_row(row(id)); }
void validate(Id id, int64_t v) { validate_row(row(id), v); }
std::string format(Id id, int64_t v) { return format_row(row(id), v); }
int64_t parse(Id id, std::string_view text) { return parse_row(row(id), text); }

int64_t get_raw(Id id) {
  const int i = static_cast<int>(id);
  Tls& t = tls;  // one thread-local lookup (a call in a shared library)
  if (t.log != nullptr) [[unlikely]]
    t.log->read_[static_cast<std::size_t>(i)] = true;
  if (t.depth > 0 && t.set[i]) return t.value[i];
  Global* g = g_table.load(std::memory_order_acquire);
  if (g == nullptr) [[unlikely]]
    g = &global();
  return g->value[i].load(std::memory_order_relaxed);
}

int64_t global_raw(Id id) { return global().value[static_cast<int>(id)].load(std::memory_order_relaxed); }

Source source(Id id) { return static_cast<Source>(global().source[static_cast<int>(id)].load()); }

int scope_depth() { return tls.depth; }

bool scoped(Id id) { return tls.depth > 0 && tls.set[static_cast<int>(id)]; }

void set_raw(Id id, int64_t v) {
  auto& g = global();
  const int i = static_cast<int>(id);
  const Row& r = g.rows[i];
  validate(id, v);
  if (r.kind & kEnvOnly) {
    throw_runtime(r.path(), r.path() + " is read-only: it is set once, at start-up, from " + r.env +
                                (r.vendor_env ? std::string(" or ") + r.vendor_env : std::string()));
  }
  if ((r.kind & kFreeze) && g.frozen.load()) {
    throw_runtime(r.path(), "not allowed to set backplane.backends." + r.path() +
                                " after disable_global_flags; please use the flags() context manager instead");
  }
  if (tls.depth > 0 && !(r.kind & kProcess)) {
    tls.value[i] = v;
    tls.set[i] = true;
    return;
  }
  g.value[i].store(v);
  g.source[i].store(static_cast<int>(Source::Api));
  g.epoch.fetch_add(1);
  for (auto& h : hooks_of(i)) h(v);
}

namespace detail {
std::optional<int64_t> env_value(Id id, const std::optional<std::string>& native,
                                 const std::optional<std::string>& vendor,
                                 const std::optional<std::string>& vendor_alias) {
  return env_value_of(global().defs[static_cast<int>(id)], native, vendor, vendor_alias);
}
}  // namespace detail

void reset(Id id) {
  auto& g = global();
  const int i = static_cast<int>(id);
  const int64_t v = g.rows[i].default_value;
  g.value[i].store(v);
  g.source[i].store(static_cast<int>(Source::Default));
  g.epoch.fetch_add(1);
  for (auto& h : hooks_of(i)) h(v);
}

uint64_t epoch() { return global().epoch.load(); }

void disable_global_flags() { global().frozen.store(true); }
bool flags_frozen() { return global().frozen.load(); }
void set_frozen(bool f) { global().frozen.store(f); }

void on_change(Id id, std::string reader, std::function<void(int64_t)> hook) {
  bool ready;
  {
    std::lock_guard<std::mutex> lock(hooks().mutex);
    hooks().by_flag[static_cast<int>(id)].push_back(hook);
    hooks().readers[static_cast<int>(id)].push_back(std::move(reader));
    ready = hooks().table_ready;
  }
  if (ready) hook(global_raw(id));  // else the table announces it when built
}

void note_read(Id id) {
  if (tls.log != nullptr) tls.log->read_[static_cast<std::size_t>(id)] = true;
}

std::vector<std::string> change_readers(Id id) {
  std::lock_guard<std::mutex> lock(hooks().mutex);
  return hooks().readers[static_cast<int>(id)];
}

ReadLog::ReadLog() : outer_(tls.log), read_(kCount, false) { tls.log = this; }
ReadLog::~ReadLog() { tls.log = outer_; }
void ReadLog::clear() { read_.assign(kCount, false); }
std::vector<Id> ReadLog::ids() const {
  std::vector<Id> out;
  for (int i = 0; i < kCount; ++i)
    if (read_[static_cast<std::size_t>(i)]) out.push_back(static_cast<Id>(i));
  return out;
}

struct Scope::Saved {
  std::array<int64_t, kCount> value;
  std::bitset<kCount> set;
};

Scope::Scope(std::vector<std::pair<Id, int64_t>> assignments) {
  // Validate everything first: a scope is applied whole or not at all.
  for (const auto& [id, v] : assignments) {
    validate(id, v);
    const Row& r = row(id);
    if (r.kind & (kProcess | kEnvOnly)) {
      throw_runtime(r.path(), r.path() + " is process-wide and cannot be set in a scope");
    }
  }
  saved_ = new Saved{tls.value, tls.set};
  for (const auto& [id, v] : assignments) {
    const int i = static_cast<int>(id);
    tls.value[i] = v;
    tls.set[i] = true;
  }
  ++tls.depth;
}

Scope::~Scope() {
  tls.value = saved_->value;
  tls.set = saved_->set;
  --tls.depth;
  delete saved_;
}

}  // namespace bp::flags
