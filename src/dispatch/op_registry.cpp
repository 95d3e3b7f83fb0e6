// Ops and their implementation lists (Note [Registering implementations
// later] in backplane/dispatch.h), and the process-wide op registry.

#include <algorithm>
#include <map>

#include "backplane/backends/registry.h"
#include "backplane/dispatch.h"

#include "backends/cuda/cuda_loader.h"
#include "dispatch/autotune_key.h"

namespace bp::dispatch {

struct Op::List {
  std::vector<const Implementation*> impls;
  std::vector<flags::Id> key_flags[2];  // per device type (index: DeviceType)
  mutable std::once_flag versions_once;
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
    if (impl->properties().device == device)
      for (flags::Id id : impl->flags_read()) add(id);
  if (ids.size() > static_cast<std::size_t>(detail::kMaxKeyFlags))
    throw_runtime(config.name, "op " + config.name + " reads " + std::to_string(ids.size()) +
                                   " flags; the autotune key holds at most " + std::to_string(detail::kMaxKeyFlags));
  return ids;
}

}  // namespace

Op::Op(OpConfig config) : config_(std::move(config)), list_(new List{}) {}

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
  static std::mutex owner_mutex;
  static std::vector<std::unique_ptr<Implementation>> owned;  // implementations live as long as the process
  Implementation* raw = impl.get();
  {
    std::lock_guard<std::mutex> owner_lock(owner_mutex);
    owned.push_back(std::move(impl));
  }
  raw->id_ = static_cast<int>(old->impls.size());
  auto* next = new List{};
  next->impls = old->impls;
  auto pos = next->impls.end();
  if (where == Position::before_reference && !next->impls.empty()) pos = std::prev(pos);
  next->impls.insert(pos, raw);
  for (DeviceType d : {DeviceType::cpu, DeviceType::cuda})
    next->key_flags[static_cast<int>(d)] = collect_key_flags(config_, next->impls, d);
  list_.store(next, std::memory_order_release);  // `old` stays valid for readers (never freed)
  detail::forget_op(*this, raw->properties().device);
  return *raw;
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
  const auto& ids = l->key_flags[static_cast<int>(device)];
  return {ids.data(), ids.size()};
}

const std::string& Op::library_versions(DeviceType device) const {
  const List* l = list_.load(std::memory_order_acquire);
  std::call_once(l->versions_once, [l] {
    for (int d = 0; d < 2; ++d) {
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
    }
  });
  return l->versions[static_cast<int>(device)];
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
