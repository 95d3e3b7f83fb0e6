// The op registry: the built-in ops of src/ops/op_list.def, op libraries
// (plugins), entry lookup, and running or explaining a prepared call
// (backplane/op_spec.h).

#include <dlfcn.h>

#include <deque>
#include <mutex>

#include "backplane/op_spec.h"
#include "backplane/log.h"
#include "core/env.h"
#include "core/threads.h"

#define BP_OP(name) \
  namespace bp::ops::name { OpSpec spec(); }
#include "ops/op_list.def"
#undef BP_OP

namespace bp::ops {
namespace {

struct Registry {
  std::recursive_mutex mutex;  // a plugin's registration runs inside ensure_ops()
  std::deque<OpInfo> ops;      // stable addresses
  std::vector<std::string> plugins_loaded;
};
Registry& registry() {
  static Registry* r = new Registry;  // lives past static destructors (exit-time autotune save)
  return *r;
}

std::string known_ops() {
  std::string out;
  for (const OpInfo& o : registry().ops) out += (out.empty() ? "" : ", ") + o.name;
  return out.empty() ? "(none)" : out;
}

std::string known_entries() {
  std::string out;
  for (const OpInfo& o : registry().ops)
    for (const EntrySpec& e : o.entries) out += (out.empty() ? "" : ", ") + e.name;
  return out.empty() ? "(none)" : out;
}

void load_env_plugins() {
  const auto paths = env::get("BACKPLANE_OP_PLUGINS");
  if (!paths) return;
  std::string rest = *paths;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string path = rest.substr(0, colon);
    rest = colon == std::string::npos ? std::string() : rest.substr(colon + 1);
    if (path.empty()) continue;
    try {
      load_plugin(path);
    } catch (const Error& e) {
      // A bad path must not make `import backplane` fail; it says why once.
      log::warn(std::string("BACKPLANE_OP_PLUGINS: ") + e.what() + " (skipped)");
    }
  }
}

}  // namespace

void register_op(OpSpec spec) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  const std::string& name = spec.config.name;
  for (const OpInfo& o : r.ops) {
    if (o.name == name) throw_bad_value("op name", "'" + name + "'", "a name no op has yet (taken: " + known_ops() + ")");
    for (const EntrySpec& e : o.entries)
      for (const EntrySpec& mine : spec.entries)
        if (e.name == mine.name || e.python == mine.python)
          throw_bad_value(name + " entry", "'" + mine.name + "' (" + mine.python + ")",
                          "an entry name and Python name no op has yet (" + o.name + " has it)");
  }
  if (spec.form && spec.form->line_dims > spec.form->dims.size())
    throw_bad_value(name + " form", std::to_string(spec.form->line_dims) + " shape-line dims",
                    "at most its " + std::to_string(spec.form->dims.size()) + " dims");
  for (EntrySpec& e : spec.entries) {
    std::string packed;
    for (const ArgSpec& a : e.args) {
      if (a.name.size() > 255) {  // not packable: Args scans e.args
        packed.clear();
        break;
      }
      packed += static_cast<char>(a.name.size());
      packed += a.name;
    }
    e.packed_arg_names = std::move(packed);
  }
  dispatch::Op& op = dispatch::define_op(spec.config);
  for (auto& impl : spec.implementations) op.add(std::move(impl));
  r.ops.push_back(OpInfo{name, &op, std::move(spec.entries), std::move(spec.form), std::move(spec.bench)});
}

namespace {
void define_builtins() {
  static std::once_flag once;
  std::call_once(once, [] {
#define BP_OP(name) register_op(name::spec());
#include "ops/op_list.def"
#undef BP_OP
  });
}
// The built-in ops exist once libbackplane is loaded, so dispatch::get_op()
// and saved autotune entries find them before any call. Plugins wait for
// the first lookup: loading a library that links this one while it is still
// being loaded is asking for trouble.
[[maybe_unused]] const bool builtins_at_load = (define_builtins(), true);
}  // namespace

void ensure_ops() {
  define_builtins();
  static std::once_flag once;
  std::call_once(once, load_env_plugins);
}

void load_plugin(const std::string& path) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  for (const std::string& p : r.plugins_loaded)
    if (p == path) return;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw_runtime("op plugin", "cannot load op library '" + path + "': " + (why ? why : "unknown error"));
  }
  using RegisterFn = void (*)();
  auto fn = reinterpret_cast<RegisterFn>(dlsym(handle, "backplane_register_ops"));
  if (fn == nullptr)
    throw_runtime("op plugin", "'" + path + "' is not an op library: it has no backplane_register_ops (BP_OP_PLUGIN)");
  r.plugins_loaded.push_back(path);
  fn();
}

std::vector<const OpInfo*> all_ops() {
  ensure_ops();
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mutex);
  std::vector<const OpInfo*> out;
  for (const OpInfo& o : r.ops) out.push_back(&o);
  return out;
}

const OpInfo& op_info(std::string_view name) {
  for (const OpInfo* o : all_ops())
    if (o->name == name) return *o;
  throw_bad_value("op", "'" + std::string(name) + "'", "one of: " + known_ops());
}

const EntrySpec* find_entry(std::string_view name) {
  for (const OpInfo* o : all_ops())
    for (const EntrySpec& e : o->entries) {
      // The last part of e.python, compared where it lies (every op call looks its entry up).
      std::string_view py = e.python;
      if (const auto dot = py.rfind('.'); dot != std::string_view::npos) py.remove_prefix(dot + 1);
      if (e.name == name || py == name) return &e;
    }
  return nullptr;
}

const EntrySpec& entry(std::string_view name, const std::string& subject) {
  if (const EntrySpec* e = find_entry(name)) return *e;
  throw_bad_value(subject, "'" + std::string(name) + "'", "one of: " + known_entries());
}

std::vector<const EntrySpec*> all_entries() {
  std::vector<const EntrySpec*> out;
  for (const OpInfo* o : all_ops())
    for (const EntrySpec& e : o->entries) out.push_back(&e);
  return out;
}

const OpInfo& op_of(const EntrySpec& e) {
  for (const OpInfo* o : all_ops())
    for (const EntrySpec& mine : o->entries)
      if (&mine == &e) return *o;
  throw_runtime(e.name, "entry " + e.name + " belongs to no registered op");
}

dispatch::Op& dispatch_op(std::string_view name) {
  ensure_ops();
  return dispatch::get_op(name);
}

// ---------------------------------------------------------------- calls

namespace {
// Dispatch, unless there is nothing to compute.
void dispatch_call(const Call& call) {
  if (call.compute && call.op != nullptr) {
    threads::apply_num_threads_to_this_thread();
    dispatch::execute(*call.op, call.problem, call.params.get());
  }
}
}  // namespace

ArgValue run(const Call& call) {
  dispatch_call(call);
  return call.result ? call.result() : ArgValue{};
}

ArgValue run(Call&& call) {
  dispatch_call(call);
  if (call.take_result) return call.take_result();
  return call.result ? call.result() : ArgValue{};
}

dispatch::Decision explain(const Call& call) {
  if (call.op == nullptr) throw_runtime("explain", "this call has no op to explain");
  return dispatch::explain(*call.op, call.problem, call.params.get());
}

}  // namespace bp::ops
