// Ops and their implementation lists (Note [Registering implementations
// later] in backplane/dispatch.h), and the process-wide op registry.

#include <algorithm>
#include <map>

#include "backplane/backends/registry.h"
#include "backplane/dispatch.h"

#include "backends/cuda/cuda_loader.h"
#include "dispatch/autotune_key.h"

namespace bp::dispatch {

// A published list. Immutable but for the answers computed on first use:
// the key flags (they may name ops defined after this one, through
// Properties::calls) and the library versions.
struct Op::List {
  std::vector<const Implementation*> impls;
  mutable std::once_flag key_flags_once;
  mutable std::atomic<bool> key_flags_ready{false};  // checked first: call_once costs tens of ns even when done
  mutable std::vector<flags::Id> key_flags[2];  // per device type (index: DeviceType)
  mutable std::once_flag versions_once[2];  // per device: a CPU answer never loads the CUDA library
  mutable std::string versions[2];
};

namespace {

// The key flags of one device type: the op's own (preference, autotune
// limit, rank), the deterministic pair select() reads, and the flags of the
// implementations for that device, so a CUDA knob never invalidates a CPU
// autotune entry (and registering CUDA implementations leaves CPU keys as
// they were).
std::vector<flags::Id> collect_key_flags(const OpConfig& config, const std::vector<const Implementation*>& impls,
                                         DeviceType device) {
  std::vector<flags::Id> ids;
  auto add = [&](flags::Id id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  const int d = static_cast<int>(device);
  if (config.preferred_library[d]) add(*config.preferred_library[d]);
  if (config.autotune[d]) add(config.autotune[d]->limit);
  for (flags::Id id : config.rank_reads) add(id);
  add(flags::Id::generic_deterministic_algorithms);  // read by select() itself
  add(flags::Id::generic_deterministic_algorithms_warn_only);
  for (const Implementation* impl : impls)
    if (impl->properties().device == device) {
      for (flags::Id id : impl->flags_read()) add(id);
      for (const std::string& callee : impl->properties().calls)
        for (flags::Id id : get_op(callee).key_flags(device)) add(id);
    }
  if (ids.size() > static_cast<std::size_t>(detail::kMaxKeyFlags))
    throw_runtime(config.name, "op " + config.name + " reads " + std::to_string(ids.size()) +
                                   " flags; the autotune key holds at most " + std::to_string(detail::kMaxKeyFlags));
  return ids;
}

}  // namespace

Op::Op(OpConfig config) : config_(std::move(config)), list_(new List{}) {
  if (config_.signature.size() > static_cast<std::size_t>(Problem::kMaxDims))
    throw_bad_value(config_.name + " signature", std::to_string(config_.signature.size()) + " dims",
                    "at most " + std::to_string(Problem::kMaxDims));
  for (const std::string& d : config_.signature) dim_names_.push_back(d.c_str());
}

Problem Op::problem(Device device, DType dtype, uint32_t layout, std::initializer_list<int64_t> dims) const {
  if (dims.size() != config_.signature.size())
    throw_runtime(config_.name, config_.name + ": a problem with " + std::to_string(dims.size()) +
                                    " dims, but its signature has " + std::to_string(config_.signature.size()));
  Problem p;
  p.device = device;
  p.dtype = dtype;
  p.layout = layout;
  p.ndims = static_cast<int>(dims.size());
  std::copy(dims.begin(), dims.end(), p.dims);
  p.dim_names = dim_names_.data();
  p.flops = config_.flops ? config_.flops(p.dims) : 0.0;
  return p;
}

Op::~Op() {
  for (const List* l : retired_) delete l;
  delete list_.load();
}

// Called with mutex_ held.
void Op::publish(List* next, DeviceType changed) {
  retired_.push_back(list_.exchange(next, std::memory_order_acq_rel));  // still valid for readers
  detail::forget_op(*this, changed);
}

namespace {
// Implementations live as long as the process (published lists point at them).
Implementation* keep(std::unique_ptr<Implementation> impl) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<Implementation>> owned;
  std::lock_guard<std::mutex> lock(mutex);
  owned.push_back(std::move(impl));
  return owned.back().get();
}
}  // namespace

void Op::replace_slot(std::string_view name,
                      const std::function<std::unique_ptr<Implementation>(const Implementation& slot)>& make) {
  std::lock_guard<std::mutex> lock(mutex_);
  const List* old = list_.load(std::memory_order_acquire);
  auto at = std::find_if(old->impls.begin(), old->impls.end(),
                         [&](const Implementation* i) { return i->name() == name && i->is_slot(); });
  if (at == old->impls.end()) {
    std::string slots;
    for (const Implementation* i : old->impls)
      if (i->is_slot()) slots += (slots.empty() ? "" : ", ") + i->name();
    throw_bad_value(config_.name + " slot", std::string(name), "an unfilled slot of " + config_.name + ": " +
                                                                  (slots.empty() ? "(none)" : slots));
  }
  std::unique_ptr<Implementation> made = make(**at);
  if (made->name() != (*at)->name())
    throw_bad_value(config_.name + " slot " + std::string(name), made->name(), "an entry of the slot's own name");
  made->id_ = (*at)->id();
  const DeviceType device = made->properties().device;
  auto* next = new List{};
  next->impls = old->impls;
  next->impls[static_cast<std::size_t>(at - old->impls.begin())] = keep(std::move(made));
  publish(next, device);
}

void fill_not_built(Op& op, std::string_view name, std::string why) {
  op.replace_slot(name, [&](const Implementation& slot) {
    auto entry = not_built(slot.name(), slot.backend(), why);
    return entry;
  });
}

Implementation& Op::add(std::unique_ptr<Implementation> impl, Position where) {
  const std::string& name = impl->name();
  const auto colon = name.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == name.size())
    throw_bad_value(config_.name + " implementation name", name, "'library:variant'");
  std::lock_guard<std::mutex> lock(mutex_);
  const List* old = list_.load(std::memory_order_acquire);
  if (old->impls.size() >= 64) throw_runtime(config_.name, "an op holds at most 64 implementations");
  for (const Implementation* i : old->impls)
    if (i->name() == name) throw_bad_value(config_.name + " implementation name", name, "a name not yet registered");
  // The smallest id not in use: ids index the implementations(...) scope
  // masks, and entries removed (remove()) give theirs back.
  uint64_t used = 0;
  for (const Implementation* i : old->impls) used |= 1ull << i->id();
  int id = 0;
  while ((used >> id) & 1) ++id;
  impl->id_ = id;
  Implementation* raw = keep(std::move(impl));
  auto* next = new List{};
  next->impls = old->impls;
  auto pos = next->impls.end();
  if (where == Position::before_reference && !next->impls.empty()) pos = std::prev(pos);
  if (where == Position::front) pos = next->impls.begin();
  next->impls.insert(pos, raw);
  publish(next, raw->properties().device);
  return *raw;
}

void Op::remove(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const List* old = list_.load(std::memory_order_acquire);
  auto at = std::find_if(old->impls.begin(), old->impls.end(), [&](const Implementation* i) { return i->name() == name; });
  if (at == old->impls.end()) throw_bad_value(config_.name + " implementation", std::string(name), "a listed implementation");
  const DeviceType device = (*at)->properties().device;
  auto* next = new List{};
  next->impls = old->impls;
  next->impls.erase(next->impls.begin() + (at - old->impls.begin()));
  publish(next, device);  // the removed entry stays alive for readers of the old list
}

std::span<const Implementation* const> Op::implementations() const {
  const List* l = list_.load(std::memory_order_acquire);
  return {l->impls.data(), l->impls.size()};
}

const Implementation* Op::find(std::string_view name) const {
  for (const Implementation* i : implementations())
    if (i->name() == name) return i;
  return nullptr;
}

std::span<const flags::Id> Op::key_flags(DeviceType device) const {
  const List* l = list_.load(std::memory_order_acquire);
  if (!l->key_flags_ready.load(std::memory_order_acquire))
    std::call_once(l->key_flags_once, [&] {
      for (DeviceType d : {DeviceType::cpu, DeviceType::cuda})
        l->key_flags[static_cast<int>(d)] = collect_key_flags(config_, l->impls, d);
      l->key_flags_ready.store(true, std::memory_order_release);
    });
  const auto& ids = l->key_flags[static_cast<int>(device)];
  return {ids.data(), ids.size()};
}

const std::string& Op::library_versions(DeviceType device) const {
  const List* l = list_.load(std::memory_order_acquire);
  const int d = static_cast<int>(device);
  std::call_once(l->versions_once[d], [l, d] {
    std::vector<std::string> seen;
    for (const Implementation* i : l->impls) {
      if (static_cast<int>(i->properties().device) != d) continue;
      if (std::find(seen.begin(), seen.end(), i->backend()) != seen.end()) continue;
      seen.push_back(i->backend());
      const auto& a = i->availability();
      std::string v = a.built ? backends::backend_info(i->backend()).version : "not-built";
      if (!l->versions[d].empty()) l->versions[d] += ",";
      l->versions[d] += i->backend() + "=" + (v.empty() ? "?" : v);
    }
  });
  return l->versions[d];
}

// ---------------------------------------------------------------- registry

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<Op>, std::less<>> ops;
};
Registry& registry() {
  static Registry r;
  return r;
}

std::string known_ops(Registry& r) {
  std::string out;
  for (const auto& [name, op] : r.ops) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "(none)" : out;
}

}  // namespace

Op& define_op(OpConfig config) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.ops.find(config.name);
  if (it != r.ops.end()) return *it->second;
  std::string name = config.name;
  auto op = std::make_unique<Op>(std::move(config));
  Op& ref = *op;
  r.ops.emplace(std::move(name), std::move(op));
  return ref;
}

Op& get_op(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.ops.find(name);
  if (it == r.ops.end()) throw_bad_value("op", std::string(name), "one of: " + known_ops(r));
  return *it->second;
}

std::vector<std::string> op_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, op] : r.ops) names.push_back(name);
  return names;
}

void load_late_implementations() {
  // Note [Registering implementations later]: backplane_cuda adds its
  // implementations when it loads, which any CUDA question triggers. The
  // name-based queries (list_implementations, explain by name) load it
  // themselves so their answers do not depend on what ran before; CPU calls
  // of an op never pay for loading the CUDA libraries.
  static std::once_flag once;
  std::call_once(once, [] { (void)bp::cuda::api(); });
}

std::vector<ImplementationInfo> list_implementations(std::string_view op_name) {
  load_late_implementations();
  const Op& op = get_op(op_name);
  std::vector<ImplementationInfo> out;
  for (const Implementation* i : op.implementations()) {
    const Availability& a = i->availability();
    out.push_back(ImplementationInfo{i->name(), std::string(i->library()), i->backend(), a.built, a.available,
                                     a.reason, i->properties(), i->check_names()});
  }
  return out;
}

}  // namespace bp::dispatch

namespace bp::dispatch {

std::vector<std::string> flag_readers(flags::Id id) {
  std::vector<std::string> out;
  // select() and execute() themselves, for every op.
  if (id == flags::Id::generic_deterministic_algorithms || id == flags::Id::generic_deterministic_algorithms_warn_only)
    out.push_back("dispatch (every op: nondeterministic implementations)");
  if (id == flags::Id::generic_trace) out.push_back("dispatch (every op: trace lines)");
  for (const std::string& name : op_names()) {
    const Op& op = get_op(name);
    const OpConfig& c = op.config();
    std::vector<std::string> roles;
    for (int d = 0; d < 2; ++d) {
      const char* dev = d == 0 ? "cpu" : "cuda";
      if (c.preferred_library[d] == id) roles.push_back(std::string(dev) + " preferred library");
      if (c.autotune[d] && c.autotune[d]->enabled == id) roles.push_back(std::string(dev) + " autotuning");
      if (c.autotune[d] && c.autotune[d]->limit == id) roles.push_back(std::string(dev) + " autotune limit");
    }
    if (std::find(c.rank_reads.begin(), c.rank_reads.end(), id) != c.rank_reads.end()) roles.push_back("order");
    for (const Implementation* impl : op.implementations()) {
      const auto ids = impl->flags_read();
      if (std::find(ids.begin(), ids.end(), id) != ids.end()) roles.push_back(impl->name());
    }
    if (roles.empty()) continue;
    std::string text = name + " (";
    for (std::size_t i = 0; i < roles.size(); ++i) text += (i ? ", " : "") + roles[i];
    out.push_back(text + ")");
  }
  for (const std::string& reader : flags::change_readers(id)) out.push_back(reader);
  return out;
}

}  // namespace bp::dispatch
