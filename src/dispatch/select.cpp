// The one selection function (Note [One selection function] in
// backplane/dispatch.h), and what is built on it: select, explain, execute.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <vector>

#include "backplane/log.h"
#include "core/median.h"
#include "core/threads.h"
#include "dispatch/autotune_key.h"

namespace bp::dispatch {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int64_t> g_autotune_runs{0};

enum class How { first, preferred, autotuned, cached };
const char* how_text(How h) {
  switch (h) {
    case How::first: return "first acceptable";
    case How::preferred: return "preferred library";
    case How::autotuned: return "autotuned";
    case How::cached: return "autotune cache";
  }
  return "";
}

struct Choice {
  const Implementation* impl = nullptr;
  How how = How::first;
};

constexpr int kTimedRuns = 3;        // rounds every candidate gets
constexpr int kMaxTimedRuns = 9;     // ... and those still close to the best, up to this many
constexpr double kCloseRatio = 1.15;  // "close": time within this factor of the best candidate's
constexpr double kHopelessRatio = 3;  // after the first round, candidates this much slower are not timed again
constexpr double kMinSampleMs = 0.2;  // a timed sample runs a short call this long in all
constexpr int kMaxSampleCalls = 64;

double time_once_ms(const Implementation& impl, const void* params) {
  const auto t0 = Clock::now();
  impl.run(params);
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Note [Interleaved autotune timing]
// The candidates are timed in rounds. Timing them one after the other let a
// burst of load from other processes fall on one candidate's runs only and
// crown a slower one; in rounds, a burst costs every candidate the same
// round. Within a round a candidate runs once untimed and then timed: it
// runs warm (its data, packed operands and scratch in cache, as in a loop of
// calls and as `backplane bench` times it); timed right after another
// candidate, memory-bound kernels ran cold and the choice flipped (Winograd
// at 0.55 ms lost to a 1.07 ms direct kernel on a 56 x 56 layer).
// - A sample is the mean of enough calls to last kMinSampleMs (from the
//   untimed call of the first round): one 25-50 us call on two threads is
//   mostly the wake-up of the second.
// - A candidate's time is the median of its samples, the statistic `backplane
//   bench` reports: the best of three let a candidate whose calls are
//   sometimes fast and usually slow win (a direct kernel at 0.053 ms median
//   over oneDNN at 0.048).
// - Candidates within kCloseRatio of the leader get more rounds among
//   themselves (up to kMaxTimedRuns): three samples each could not separate
//   ones 5-15% apart, and cpu.benchmark's choice landed 0.80-0.88x of the
//   fastest on a fifth of the near ties of a ResNet-50 / MobileNet-V2 bench
//   (Winograd against oneDNN at 12%, oneDNN against a direct kernel at 20%).
//   A clear winner costs no extra round.
// - Candidates over kHopelessRatio times the leader's first sample are not
//   timed again: they cannot win, and their runs changed the others' times
//   (im2col's 13.6 ms calls, whose inner matmul runs on oneDNN, left
//   oneDNN's own 0.06 ms depthwise convolution at 0.11 ms in the rounds
//   after them, and a 25%-slower direct kernel won).
void time_candidates(const Implementation* const* candidates, int count, const void* params, double* time_ms) {
  std::vector<std::vector<double>> samples(static_cast<std::size_t>(count));
  std::vector<int> calls(static_cast<std::size_t>(count), 1);
  auto time_round = [&](int i) {
    const auto u = static_cast<std::size_t>(i);
    const double warm = time_once_ms(*candidates[i], params);  // untimed in the result: warms this candidate
    if (samples[u].empty() && warm > 0)
      calls[u] = static_cast<int>(std::clamp(kMinSampleMs / warm, 1.0, double{kMaxSampleCalls}));
    const auto t0 = Clock::now();
    for (int c = 0; c < calls[u]; ++c) candidates[i]->run(params);
    samples[u].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / calls[u]);
    time_ms[i] = median(samples[u]);
  };
  for (int i = 0; i < count; ++i) time_round(i);
  const double first_lead = *std::min_element(time_ms, time_ms + count);
  for (int round = 1; round < kTimedRuns; ++round)
    for (int i = 0; i < count; ++i)
      if (time_ms[i] <= first_lead * kHopelessRatio) time_round(i);
  for (int round = kTimedRuns; round < kMaxTimedRuns; ++round) {
    const double lead = *std::min_element(time_ms, time_ms + count);
    const auto close = [&](int i) { return time_ms[i] <= lead * kCloseRatio; };
    int contenders = 0;
    for (int i = 0; i < count; ++i) contenders += close(i) ? 1 : 0;
    if (contenders < 2) break;
    for (int i = 0; i < count; ++i)
      if (close(i)) time_round(i);
  }
}

Row* row_for(Decision* table, const Implementation& impl) {
  if (!table) return nullptr;
  for (Row& r : table->rows)
    if (r.implementation == impl.name()) return &r;
  return nullptr;
}

// The preferred library for this problem's device, or nullptr ("default").
const char* preferred_library(const Op& op, const Problem& p) {
  const auto& id = op.config().preferred_library[static_cast<int>(p.device.type)];
  if (!id) return nullptr;
  const int64_t v = flags::get_raw(*id);
  return v == 0 ? nullptr : flags::row(*id).domain.names[v];
}

Choice decide(const Op& op, const Problem& p, const void* params, Decision* table) {
  const bool collect = table != nullptr;
  const auto impls = op.implementations();

  // 1. Order: the op's list (sorted by the op's rank when it has one), the
  // preferred library's entries moved first.
  const Implementation* ranked[64];
  int nr = 0;
  for (const Implementation* i : impls) ranked[nr++] = i;
  if (const auto& rank = op.config().rank) {
    int ranks[64];
    for (int i = 0; i < nr; ++i) ranks[i] = rank(*ranked[i], p);
    // Insertion sort: stable, and lists are short.
    for (int i = 1; i < nr; ++i)
      for (int j = i; j > 0 && ranks[j - 1] > ranks[j]; --j) {
        std::swap(ranks[j - 1], ranks[j]);
        std::swap(ranked[j - 1], ranked[j]);
      }
  }
  const char* preferred = preferred_library(op, p);
  const Implementation* order[64];
  int n = 0;
  bool preferred_present = false, preferred_built = false;
  if (preferred) {
    for (int idx = 0; idx < nr; ++idx)
      if (ranked[idx]->library() == preferred) {
        order[n++] = ranked[idx];
        preferred_present = true;
        preferred_built = preferred_built || ranked[idx]->availability().built;
      }
  }
  for (int idx = 0; idx < nr; ++idx)
    if (!preferred || ranked[idx]->library() != preferred) order[n++] = ranked[idx];
  if (collect && preferred) {
    const std::string flag = flags::row(*op.config().preferred_library[static_cast<int>(p.device.type)]).path();
    if (!preferred_present)
      table->notes.push_back(flag + " = " + preferred + ", but " + op.name() +
                             " has no implementation from that library: the default order is used");
    else if (!preferred_built)
      table->notes.push_back(flag + " = " + preferred + ", which is not built: falling back to the default order");
    else
      table->notes.push_back(flag + " = " + preferred + ": its implementations are tried first");
  }

  // 2. Autotuning and its cache.
  const auto& tune_flags = op.config().autotune[static_cast<int>(p.device.type)];
  const bool tune = tune_flags && flags::get_raw(tune_flags->enabled) != 0;
  const uint64_t allowed = allowed_mask(op);
  detail::Key key;
  if (tune) {
    key = detail::make_key(op, p, allowed);
    if (const Implementation* w = detail::cache_lookup(key)) {
      Reasons quick(false);
      if (!collect && w->can_use(params, quick)) return {w, How::cached};
      if (collect) table->notes.push_back("autotune cache holds " + w->name() + " for this problem");
    }
  }

  // 3. Filter: built, available, in scope, on the problem's device,
  // deterministic if asked, checks. Deterministic mode rejects
  // nondeterministic implementations, unless warn_only: then they stay
  // acceptable and warn when they run (execute()).
  const bool deterministic = flags::get_raw(flags::Id::generic_deterministic_algorithms) != 0 &&
                             flags::get_raw(flags::Id::generic_deterministic_algorithms_warn_only) == 0;
  const Implementation* survivors[64];
  int ns = 0;
  for (int idx = 0; idx < n; ++idx) {
    const Implementation* impl = order[idx];
    const bool same_device = impl->properties().device == p.device.type;
    // Selection never looks at another device's entries (their availability
    // may mean loading a library); explain writes every row down.
    if (!collect && !same_device) continue;
    const Availability& a = impl->availability();
    Status status = Status::acceptable;
    Reasons reasons(collect);
    if (!a.built || !a.available) {
      status = a.built ? Status::not_available : Status::not_built;
      reasons.add(Reason{"", "", a.reason});  // "not available: no usable CUDA device"
    } else if (!((allowed >> impl->id()) & 1)) {
      status = Status::excluded;
      if (collect)
        reasons.add(Reason{"excluded", "",
                           "outside this thread's implementations(\"" + op.name() + "\", ...) scope (" +
                               scope_names(op) + ")"});
    } else if (!same_device) {
      status = Status::rejected;
      reasons.begin_check("device");
      reasons.fail(std::string(device_type_name(impl->properties().device)) + " tensors", p.device.str());
    } else {
      bool ok = true;
      if (deterministic && !impl->properties().deterministic) {
        reasons.begin_check("deterministic");
        reasons.fail("a deterministic implementation (use_deterministic_algorithms(True))", "a nondeterministic one");
        ok = false;
      }
      if (ok || collect) ok = impl->can_use(params, reasons) && ok;
      if (!ok) status = Status::rejected;
    }
    if (status == Status::acceptable) survivors[ns++] = impl;
    if (collect) table->rows.push_back(Row{impl->name(), status, reasons.list()});
    // Without a table and without autotuning, the first survivor is the answer.
    if (!collect && !tune && ns == 1) break;
  }
  if (ns == 0) return {};

  // 4. Choose.
  Choice choice{survivors[0], preferred && survivors[0]->library() == preferred ? How::preferred : How::first};
  // The reference (the list's last entry for the problem's device type: a
  // list may end with ref:cuda before ref:any) is the fallback for
  // correctness, never a contender: it is not timed when anything else survived.
  if (tune && ns > 1) {
    const Implementation* reference = nullptr;
    for (const Implementation* i : impls)
      if (i->properties().device == p.device.type) reference = i;
    if (survivors[ns - 1] == reference) --ns;
  }
  if (tune && ns > 1) {
    const int64_t limit = flags::get_raw(tune_flags->limit);
    const int count = limit == 0 ? ns : static_cast<int>(std::min<int64_t>(limit, ns));
    if (collect) {
      if (const Implementation* w = detail::cache_lookup(key)) {
        choice = {w, How::cached};
      } else {
        table->notes.push_back(flags::row(tune_flags->enabled).path() + " is on: the first call times " +
                               std::to_string(count) + " acceptable implementation(s) (limit " +
                               flags::row(tune_flags->limit).path() + " = " + std::to_string(limit) +
                               ") and caches the fastest; until then the first acceptable is shown");
      }
    } else {
      g_autotune_runs.fetch_add(1);
      double times[64];
      time_candidates(survivors, count, params, times);  // Note [Interleaved autotune timing]
      double best = 0;
      const bool trace = flags::get_raw(flags::Id::generic_trace) != 0;
      for (int i = 0; i < count; ++i) {
        if (trace) log::trace("autotune " + op.name() + ": " + survivors[i]->name() + " " + p.str() + " " +
                              std::to_string(times[i]) + " ms");
        if (i == 0 || times[i] < best) {
          best = times[i];
          choice = {survivors[i], How::autotuned};
        }
      }
      detail::cache_store(key, *choice.impl, best);
    }
  } else if (tune && !collect) {
    detail::cache_store(key, *choice.impl, -1);  // a single candidate: nothing to time
  }
  if (Row* r = row_for(table, *choice.impl)) r->status = Status::chosen;
  return choice;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string Decision::text() const {
  std::string out = op + ": " + problem + "\n";
  for (const Row& r : rows) {
    std::string head = "  " + pad(r.implementation, 22) + pad(status_name(r.status), 15);
    if (r.reasons.empty()) {
      out += head + (r.status == Status::chosen ? "(" + how + ")" : "") + "\n";
      continue;
    }
    for (std::size_t i = 0; i < r.reasons.size(); ++i)
      out += (i == 0 ? head : std::string(head.size(), ' ')) + r.reasons[i].text() + "\n";
  }
  for (const std::string& n : notes) out += "  note: " + n + "\n";
  return out;
}

NoImplementationError::NoImplementationError(Decision decision)
    : Error(ErrorKind::Runtime,
            decision.op + ": no implementation accepts this problem (" + decision.problem + ")\n" + decision.text(),
            decision.op, decision.problem, "a problem some implementation accepts (see the table)"),
      decision_(std::move(decision)) {}

Decision explain(const Op& op, const Problem& problem, const void* params) {
  load_late_implementations();  // the table lists every implementation there is
  Decision d;
  d.op = op.name();
  d.problem = problem.str();
  const Choice c = decide(op, problem, params, &d);
  d.chosen = c.impl;
  d.how = c.impl ? how_text(c.how) : "";
  if (op.config().notes)
    for (std::string& n : op.config().notes(problem)) d.notes.push_back(std::move(n));
  if (op.config().call_notes && params != nullptr)
    for (std::string& n : op.config().call_notes(problem, params)) d.notes.push_back(std::move(n));
  return d;
}

const Implementation& select(const Op& op, const Problem& problem, const void* params) {
  const Choice c = decide(op, problem, params, nullptr);
  if (!c.impl) throw NoImplementationError(explain(op, problem, params));
  return *c.impl;
}

namespace {
// use_deterministic_algorithms(True, warn_only=True): a nondeterministic
// implementation may run, with a warning (once per implementation).
void warn_if_nondeterministic(const Op& op, const Implementation& impl) {
  if (impl.properties().deterministic || flags::get_raw(flags::Id::generic_deterministic_algorithms) == 0) return;
  log::warn_once("nondeterministic:" + impl.name(),
                 op.name() + " ran " + impl.name() + ", which is not deterministic, but you set "
                 "use_deterministic_algorithms(True, warn_only=True). Restrict the op with "
                 "implementations(...) or turn off warn_only to run only deterministic implementations.");
}
}  // namespace

void execute(const Op& op, const Problem& problem, const void* params) {
  std::optional<threads::ScopedTeamLimit> team;  // Note [Small problems on fewer threads]
  if (const double grain = op.config().flops_per_thread; grain > 0 && problem.device.is_cpu())
    team.emplace(threads::threads_for_work(problem.flops, grain));
  if (flags::get_raw(flags::Id::generic_trace) == 0) {
    const Implementation& impl = select(op, problem, params);
    warn_if_nondeterministic(op, impl);
    impl.run(params);
    return;
  }
  const auto t0 = Clock::now();
  const Choice c = decide(op, problem, params, nullptr);
  if (!c.impl) throw NoImplementationError(explain(op, problem, params));
  const double choose_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  warn_if_nondeterministic(op, *c.impl);
  char buf[96];
  std::snprintf(buf, sizeof buf, " (%s, %.2f us)", how_text(c.how), choose_us);
  log::trace("dispatch " + op.name() + ": " + c.impl->name() + " for " + problem.str() + buf);
  const double ms = time_once_ms(*c.impl, params);
  const double gflops = problem.flops > 0 && ms > 0 ? problem.flops / (ms * 1e6) : 0;
  std::snprintf(buf, sizeof buf, " %.3f ms %.1f GFLOP/s", ms, gflops);
  log::trace("run " + op.name() + ": " + c.impl->name() + " " + problem.str() + buf);
}

int64_t autotune_runs() { return g_autotune_runs.load(); }

}  // namespace bp::dispatch
