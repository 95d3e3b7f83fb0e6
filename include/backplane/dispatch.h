#pragma once
// Dispatch: every op lists its implementations, and one function picks one
// (DESIGN.md §4; docs/dispatch.md).
//
//   bp::dispatch::Op& op = bp::dispatch::define_op(config);     // once (ops declare theirs in
//   op.add(std::make_unique<bp::dispatch::Impl<MatmulParams>>(...));   // src/ops/<op>/op.cpp)
//   bp::dispatch::execute(op, problem, &params);                // per call
//   bp::dispatch::Decision d = bp::dispatch::explain(op, problem, &params);
//
// Ops are declared in the ops layer (backplane/op_spec.h, docs/adding_an_op.md):
// one file per op lists its implementations in order, CUDA rows included
// as slots that backplane_cuda fills (Note [Slots]).
//
// Note [One selection function]
// decide() in src/dispatch/select.cpp is the only place that chooses. It takes
// the op's list in order, moves the preferred library first, drops what is not
// built, not available, outside this thread's implementations(...) scope or
// fails its checks (user flags are checks like any other: enabled,
// deterministic, precision), then either takes the first survivor or, when
// the op's autotune flag is on, times the survivors once per problem key and
// caches the winner. select() and explain() are the same call; explain only
// asks it to write every row down.
//
// Note [Autotune key]
// A problem key holds the op, device, thread count, dtype, layout class, the
// shape signature, the implementations(...) restriction, and the *values* of every
// flag that the checks and runs of the implementations for the problem's
// device type read (the check building blocks of backplane/dispatch_checks.h
// declare them; a test records every read and fails on an undeclared one),
// plus the key flags of the ops those implementations call, never
// flags::epoch(). Saved files also carry the versions of the libraries behind
// the op, and an entry whose versions differ from this process's is dropped at
// load. So a saved cache is valid in any process whose flags and libraries
// agree, and a changed knob simply misses.
//
// Note [Slots]
// An op's list names every implementation it can have, in the order users
// see, including those a library loaded later provides (backplane_cuda):
// those are slots, declared with their checks, properties and the flags
// they read, but no run function. The late library fills a slot by name
// (fill<P>(op, name, run)), or marks it not built; an unfilled slot
// explains itself through the function it was declared with ("not
// available: no usable CUDA device"). Because the checks are declared in
// the core, the flags a CUDA implementation reads are known without the
// CUDA library, and `backplane info` lists them on every build.
// (load_late_implementations() below loads backplane_cuda for the
// name-based queries, so listings and explain by name show filled slots.)
//
// Note [Registering implementations later]
// Op lists are copy-on-write: add() and fill() publish a new list with one
// atomic store, so a library loaded later can change the list while other
// threads dispatch. add() with Position::before_reference is for entries
// no list declares (tests, user-registered implementations). Both clear
// the op's cached autotune winners for the device type whose candidates
// changed.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "backplane/device.h"
#include "backplane/dtype.h"
#include "backplane/error.h"
#include "backplane/flags.h"
#include "backplane/tensor.h"

namespace bp::dispatch {

// ---------------------------------------------------------------- reasons

// One failed check: "<check>: expected <expected>, got <got>".
// A reason with no `expected` reads "<check>: <got>" ("not available: no
// usable CUDA device"), and with no check either just "<got>".
struct Reason {
  std::string check, expected, got;
  std::string text() const;
};

// Where checks write why they fail. Selection runs checks without
// collecting (no strings are built, the first failure stops the list);
// explain() collects every reason.
class Reasons {
 public:
  // collect: build every reason's text (explain). exhaustive: run every
  // check without building text (the declared-reads test: the reads of
  // selection itself, never those of reason texts).
  explicit Reasons(bool collect, bool exhaustive = false) : collect_(collect), exhaustive_(exhaustive) {}
  bool collecting() const { return collect_; }
  // Whether a failed check ends the list (selection).
  bool stops_early() const { return !collect_ && !exhaustive_; }
  // Records a failure of the running check; returns false so checks can
  // `return r.fail(...)`.
  bool fail(std::string_view expected, std::string_view got);
  // The same, building `got` (a callable returning a string) only when collecting.
  template <class GotFn>
    requires std::is_invocable_v<GotFn>
  bool fail(std::string_view expected, GotFn&& got) {
    if (collect_) return fail(expected, std::string_view(std::string(got())));
    ++failures_;
    return false;
  }
  int failures() const { return failures_; }
  const std::vector<Reason>& list() const { return list_; }
  // Used by can_use(): names the check that is running.
  void begin_check(const char* name) { current_ = name; }
  void add(Reason r);

 private:
  bool collect_, exhaustive_;
  int failures_ = 0;
  const char* current_ = "";
  std::vector<Reason> list_;
};

// ---------------------------------------------------------------- problems

// What dispatch knows of a call, independent of the op's parameter type:
// enough for the autotune key, explain and trace. Filled by the op's front end.
struct Problem {
  static constexpr int kMaxDims = 16;
  Device device = Device::cpu();
  DType dtype = DType::f32;
  uint32_t layout = 0;             // op-defined layout class bits (transposes, strides, bias kind)
  int ndims = 0;
  int64_t dims[kMaxDims] = {};     // the op's shape signature (OpConfig::signature; matmul: batch, m, n, k)
  const char* const* dim_names = nullptr;  // names of dims ("batch", "m", ...), for text
  double flops = 0;                // work, for trace and bench (OpConfig::flops)
  // "batch=1 m=64 n=64 k=64 f32 layout=0x0 cpu"
  std::string str() const;
};

// ---------------------------------------------------------------- implementations

// Reduced-precision arithmetic an implementation may use (bit set).
enum Reduced : uint32_t { kNoReduced = 0, kBf16 = 1u << 0, kTf32 = 1u << 1, kFp16Accumulation = 1u << 2 };
std::string reduced_text(uint32_t reduced);  // "bf16, tf32" or "none"

struct Properties {
  DeviceType device = DeviceType::cpu;  // the device its tensors live on (dispatch checks it: "device")
  bool deterministic = true;
  uint32_t reduced = kNoReduced;  // what it may use when the precision knobs permit it
  std::string workspace = "none";  // what extra memory it takes ("A and B as bf16")
  // Ops whose dispatch its run enters (math:any calls matmul): their key
  // flags join this op's autotune key (Note [Autotune key]).
  std::vector<std::string> calls = {};
};

// Whether an implementation can run in this build and process (the first two
// of the four questions of DESIGN.md §2). `reason` starts with "not built: "
// or "not available: " when it cannot.
struct Availability {
  bool built = true;
  bool available = true;
  std::string reason;
};

class Implementation {
 public:
  // name is "library:variant"; backend is a registry name (backends::backend_info).
  Implementation(std::string name, std::string backend, Properties properties);
  virtual ~Implementation() = default;

  const std::string& name() const { return name_; }
  std::string_view library() const;  // "builtin" of "builtin:avx512"
  const std::string& backend() const { return backend_; }
  const Properties& properties() const { return properties_; }
  // Computed once (the registry's answer for `backend`, then availability_override()).
  const Availability& availability() const;

  // Runs the checks on type-erased params; false when any fails.
  virtual bool can_use(const void* params, Reasons& reasons) const = 0;
  virtual void run(const void* params) const = 0;
  // The flags the checks and run read (Note [Autotune key]).
  virtual std::vector<flags::Id> flags_read() const = 0;
  // Whether it is a slot still waiting for its run function (Note [Slots]).
  virtual bool is_slot() const { return false; }
  // Names of the checks, in order (for docs and tests).
  virtual std::vector<std::string> check_names() const = 0;

  // Position in the op's registration order; stable, < 64 (scope masks).
  int id() const { return id_; }

 protected:
  // Narrows availability beyond the backend record (a CPU without AVX-512).
  // Return nullopt to keep the backend's answer.
  virtual std::optional<Availability> availability_override() const { return std::nullopt; }

 private:
  friend class Op;
  std::string name_, backend_;
  Properties properties_;
  int id_ = -1;
  mutable std::once_flag availability_once_;
  mutable std::atomic<bool> availability_ready_{false};  // checked first: call_once costs tens of ns even when done
  mutable Availability availability_;
};

// A small named check: adds "expected X, got Y" to reasons when it fails.
// Checks that read flags are made with the building blocks of
// backplane/dispatch_checks.h, which fill `reads` themselves (Note
// [Autotune key]); a plain {name, fn} check reads none.
template <class P>
struct Check {
  const char* name;
  std::function<bool(const P& params, Reasons& reasons)> fn;
  std::vector<flags::Id> reads = {};
};

// The usual implementation: a list of checks and a run function on params P.
// Without a run function it is a slot (Note [Slots]): `availability` then
// says why it cannot run yet, and fill() makes the runnable entry.
template <class P>
class Impl final : public Implementation {
 public:
  Impl(std::string name, std::string backend, Properties properties, std::vector<Check<P>> checks,
       std::function<void(const P&)> run, std::vector<flags::Id> run_reads = {},
       std::function<std::optional<Availability>()> availability = {})
      : Implementation(std::move(name), std::move(backend), std::move(properties)),
        checks_(std::move(checks)),
        run_(std::move(run)),
        run_reads_(std::move(run_reads)),
        availability_fn_(std::move(availability)) {}

  bool is_slot() const override { return !run_; }
  // The filled entry of a slot: its declaration, the run function and the
  // checks only the late library can make (they run after the declared ones).
  std::unique_ptr<Implementation> filled(std::function<void(const P&)> run, std::vector<Check<P>> extra) const {
    std::vector<Check<P>> all = checks_;
    for (Check<P>& c : extra) all.push_back(std::move(c));
    return std::make_unique<Impl<P>>(name(), backend(), properties(), std::move(all), std::move(run), run_reads_);
  }

  bool can_use(const void* params, Reasons& reasons) const override {
    if (!run_) return false;  // a slot: availability already refused it
    const P& p = *static_cast<const P*>(params);
    bool ok = true;
    for (const Check<P>& c : checks_) {
      reasons.begin_check(c.name);
      if (!c.fn(p, reasons)) {
        ok = false;
        if (reasons.stops_early()) return false;
      }
    }
    return ok;
  }
  void run(const void* params) const override { run_(*static_cast<const P*>(params)); }
  std::vector<flags::Id> flags_read() const override {
    std::vector<flags::Id> ids = run_reads_;
    for (const Check<P>& c : checks_) ids.insert(ids.end(), c.reads.begin(), c.reads.end());
    return ids;
  }
  std::vector<std::string> check_names() const override {
    std::vector<std::string> names;
    for (const Check<P>& c : checks_) names.emplace_back(c.name);
    return names;
  }

 protected:
  std::optional<Availability> availability_override() const override {
    return availability_fn_ ? availability_fn_() : std::nullopt;
  }

 private:
  std::vector<Check<P>> checks_;
  std::function<void(const P&)> run_;
  std::vector<flags::Id> run_reads_;
  std::function<std::optional<Availability>()> availability_fn_;
};

// An entry for an implementation this build does not contain, so explain()
// and list_implementations() still show it ("not built: ...").
std::unique_ptr<Implementation> not_built(std::string name, std::string backend, std::string why);

// ---------------------------------------------------------------- ops

// Which flag turns autotuning on for a device, and which limits it.
struct AutotuneFlags {
  flags::Id enabled;
  flags::Id limit;
};

struct OpConfig {
  std::string name;  // "matmul": the src/ops/<op> folder name
  // The shape signature: names of Problem::dims ("batch", "m", "n", "k"),
  // at most Problem::kMaxDims, and the work of a problem (for trace, bench).
  std::vector<std::string> signature;
  std::function<double(const int64_t* dims)> flops;
  // Per device type (index: DeviceType): the flag naming a preferred library
  // (an enum row whose "default" means none), and the autotune flags.
  std::optional<flags::Id> preferred_library[2];
  std::optional<AutotuneFlags> autotune[2];
  // Op-level notes for explain (precision knobs that change nothing here, ...).
  std::function<std::vector<std::string>(const Problem&)> notes;
  // Notes that need the call's parameters (the params explain receives):
  // einsum's contraction path and the matmul decision of each step. They
  // follow `notes`; they must not run the call.
  std::function<std::vector<std::string>(const Problem&, const void* params)> call_notes;
  // Optional run-time order (sdpa on CUDA follows cuda.sdp_priority_order):
  // the rank of an implementation for a problem; the list is stably sorted
  // by it before the preferred library moves first. `rank_reads` are the
  // flags it reads (they join the autotune key); `notes` should say how the
  // order came about.
  std::function<int(const Implementation&, const Problem&)> rank;
  std::vector<flags::Id> rank_reads;
  // CPU problems of fewer FLOPs than this per thread run on fewer threads
  // (Note [Small problems on fewer threads] in src/core/threads.h); 0: all.
  double flops_per_thread = 0;
};

enum class Position { end, before_reference, front };

class Op {
 public:
  explicit Op(OpConfig config);
  // Frees every list it published: only for an op no thread can still
  // dispatch through (a test's own op); the registry's ops live as long as
  // the process.
  ~Op();
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;
  const OpConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }

  // Publishes a new list (Note [Registering implementations later]).
  // ValueError on a duplicate name or a malformed one (not "library:variant").
  Implementation& add(std::unique_ptr<Implementation> impl, Position where = Position::end);
  // Takes an entry out of the list (an implementation supplied at run time
  // and withdrawn); ValueError when none has that name. Its id is free again.
  void remove(std::string_view name);
  // Replaces the slot `name` (Note [Slots]) with make(slot), keeping its
  // place; ValueError when there is no such slot (or it is filled already).
  void replace_slot(std::string_view name,
                    const std::function<std::unique_ptr<Implementation>(const Implementation& slot)>& make);

  // A problem of this op's shape signature: dims in signature order (their
  // count must match), names and flops filled in.
  Problem problem(Device device, DType dtype, uint32_t layout, std::initializer_list<int64_t> dims) const;

  // The current list, in order. Valid for the life of the process.
  std::span<const Implementation* const> implementations() const;
  // By full name; nullptr when none.
  const Implementation* find(std::string_view name) const;

  // The flags that key autotune entries for problems on `device`: those the
  // device's implementations read, deduplicated, in first-use order, plus
  // the op's preference, autotune-limit and rank flags and the key flags
  // of the ops its implementations call.
  std::span<const flags::Id> key_flags(DeviceType device) const;
  // "openblas=0.3.21 onednn=2.6.3" for the implementations of a device type.
  const std::string& library_versions(DeviceType device) const;

 private:
  struct List;
  void publish(List* next, DeviceType changed);
  OpConfig config_;
  std::vector<const char*> dim_names_;  // config_.signature as C strings (Problem::dim_names)
  mutable std::mutex mutex_;          // serialises add(), remove() and replace_slot()
  std::atomic<const List*> list_;     // the current list
  // Lists replaced by a later publish: a dispatching thread may still read
  // one, so they are kept (a few hundred bytes per change) and freed only
  // with the op. Held here, not dropped, so they stay reachable (no leak
  // report under LeakSanitizer).
  std::vector<const List*> retired_;
};

// Defines an op (once; later calls with the same name return the same op and
// ignore `config`). Thread-safe.
Op& define_op(OpConfig config);
// The op named `name`; ValueError naming the known ops when none.
Op& get_op(std::string_view name);
std::vector<std::string> op_names();

// ---------------------------------------------------------------- decisions

enum class Status { chosen, acceptable, rejected, excluded, not_built, not_available, not_tried };
const char* status_name(Status s);  // "chosen", "acceptable", "rejected", "excluded by scope", ...

struct Row {
  std::string implementation;
  Status status;
  std::vector<Reason> reasons;  // rejected: every failed check; not built / available / excluded: one
  double time_ms = -1;          // autotuned: best measured time
};

// The whole decision table (Note [One selection function]).
struct Decision {
  std::string op;
  std::string problem;              // Problem::str()
  std::vector<Row> rows;            // in the order considered (preferred library first)
  std::vector<std::string> notes;   // preference fallbacks, autotune, precision remarks
  const Implementation* chosen = nullptr;
  std::string how;                  // "first acceptable", "preferred library", "autotuned", "autotune cache"
  // A table for humans: one line per row plus notes.
  std::string text() const;
};

// Raised when nothing is acceptable: the table as text (what()) and as data.
class NoImplementationError : public Error {
 public:
  explicit NoImplementationError(Decision decision);
  const Decision& decision() const { return decision_; }

 private:
  Decision decision_;
};

// The implementation to run (may autotune). NoImplementationError when none.
const Implementation& select(const Op& op, const Problem& problem, const void* params);
// The decision table; never raises for "nothing acceptable" (chosen == nullptr).
Decision explain(const Op& op, const Problem& problem, const void* params);
// select, then run, with trace lines (backends.trace).
void execute(const Op& op, const Problem& problem, const void* params);

// Fills slot `name` of `op` (Note [Slots]) with a run function and the
// checks only the late library can make. ValueError when `op` has no such
// slot or its parameter type is not P.
template <class P>
void fill(Op& op, std::string_view name, std::function<void(const P&)> run, std::vector<Check<P>> extra = {}) {
  op.replace_slot(name, [&](const Implementation& slot) -> std::unique_ptr<Implementation> {
    const auto* declared = dynamic_cast<const Impl<P>*>(&slot);
    if (declared == nullptr)
      throw_bad_value(op.name() + " slot " + std::string(name), "a run function of another parameter type",
                      "the parameter type the slot was declared with");
    return declared->filled(std::move(run), std::move(extra));
  });
}
// Marks slot `name` as not built, saying why ("the cuDNN frontend headers were not found").
void fill_not_built(Op& op, std::string_view name, std::string why);

// ---------------------------------------------------------------- implementations scope

// Restricts an op to named implementations on this thread (full names, or
// library prefixes such as "builtin"); enable flags and checks still apply.
// Nests; the innermost scope for an op wins. Unknown names: ValueError, and
// nothing is applied.
class ImplementationsGuard {
 public:
  ImplementationsGuard(std::string_view op, const std::vector<std::string>& names);
  ~ImplementationsGuard();
  ImplementationsGuard(const ImplementationsGuard&) = delete;
  ImplementationsGuard& operator=(const ImplementationsGuard&) = delete;

 private:
  const Op* op_;
};
// The mask of implementation ids this thread may use for `op` (all ones when unrestricted).
uint64_t allowed_mask(const Op& op);
// The names of the innermost scope for `op` on this thread ("" when none).
std::string scope_names(const Op& op);

// ---------------------------------------------------------------- autotune cache

// The process-wide cache of autotuned winners (Note [Autotune key]). Bounded
// by flag row autotune_cache_max_size (least recently used entries go first;
// 0 = unbounded). BACKPLANE_AUTOTUNE_CACHE names a file loaded at start-up
// and saved at exit.
namespace autotune_cache {
int64_t size();
int64_t max_size();
void set_max_size(int64_t n);  // ValueError when negative
void clear();
// Writes every entry (text, one per line); RuntimeError when the file cannot be written.
void save(const std::string& path);
// Adds the file's entries; returns how many were taken. Entries for other
// library versions are skipped; a malformed file is a ValueError naming the line.
int64_t load(const std::string& path);
}  // namespace autotune_cache

// Note [Tuned details]
// An implementation that tunes itself (cudnn:conv times cuDNN's engine
// configurations under cudnn.benchmark) keeps its choice in the autotune
// cache, beside dispatch's winners: keyed like them (the problem key, Note
// [Autotune key]) plus the implementation, so a changed knob or library
// version misses, and saved, loaded and bounded with them. The detail is
// text the implementation parses itself (no tabs or newlines: they become
// spaces); it must be one that any process with the same key can use.
std::optional<std::string> tuned_detail(const Op& op, const Problem& problem, const Implementation& impl);
void store_tuned_detail(const Op& op, const Problem& problem, const Implementation& impl, const std::string& detail,
                        double time_ms);

// ---------------------------------------------------------------- flag readers

// Who reads flag `id`: "matmul onednn:matmul (check enabled)", "sdpa (order)",
// ... over every op's implementations, slots included (Note [Slots]), and
// the readers named with flags::on_change. Empty when nothing reads it.
std::vector<std::string> flag_readers(flags::Id id);

// ---------------------------------------------------------------- listing

struct ImplementationInfo {
  std::string name, library, backend;
  bool built = false, available = false;
  std::string reason;  // why not built / available
  Properties properties;
  std::vector<std::string> checks;
};
// ValueError naming the known ops when `op` is unknown.
std::vector<ImplementationInfo> list_implementations(std::string_view op);
// Loads libraries that register implementations at load time (backplane_cuda), once.
void load_late_implementations();

// How many times select() has timed candidates in this process (for tests).
int64_t autotune_runs();

}  // namespace bp::dispatch
