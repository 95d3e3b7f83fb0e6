// Strategy names, find_path() and the path cache (paths.h).

#include <list>
#include <mutex>
#include <unordered_map>

#include "backplane/error.h"
#include "ops/einsum/paths.h"

namespace bp::ops::einsum {

namespace {
struct Named {
  Strategy strategy;
  const char* name;
};
constexpr Named kNames[] = {{Strategy::automatic, "auto"},   {Strategy::greedy, "greedy"},
                            {Strategy::optimal, "optimal"},   {Strategy::dp, "dp"},
                            {Strategy::branch_1, "branch-1"}, {Strategy::branch_2, "branch-2"},
                            {Strategy::branch_all, "branch-all"}, {Strategy::left_to_right, "left-to-right"}};
}  // namespace

const char* strategy_name(Strategy s) {
  for (const Named& n : kNames)
    if (n.strategy == s) return n.name;
  return "?";
}

Strategy parse_strategy(const std::string& name, const std::string& subject) {
  for (const Named& n : kNames)
    if (name == n.name && n.strategy != Strategy::left_to_right) return n.strategy;
  throw_bad_value(subject, "'" + name + "'", "one of auto, greedy, optimal, dp, branch-1, branch-2, branch-all");
}

Strategy strategy_of(flags::EinsumStrategy s) {
  switch (s) {
    case flags::EinsumStrategy::Auto: return Strategy::automatic;
    case flags::EinsumStrategy::Greedy: return Strategy::greedy;
    case flags::EinsumStrategy::Optimal: return Strategy::optimal;
    case flags::EinsumStrategy::Dp: return Strategy::dp;
    case flags::EinsumStrategy::Branch1: return Strategy::branch_1;
    case flags::EinsumStrategy::Branch2: return Strategy::branch_2;
    case flags::EinsumStrategy::BranchAll: return Strategy::branch_all;
  }
  return Strategy::automatic;
}

Path left_to_right_path(int operands) {
  // ((A0 A1) A2) ...: the running result sits at the end of the list.
  Path p = {{0, 1}};
  for (int left = operands - 2; left >= 1; --left) p.push_back({0, left});
  return p;
}

Found find_path(const Network& net, Strategy strategy) {
  const int n = net.size();
  if (n == 1) return {{{0}}, "one operand"};
  if (n == 2) return {{{0, 1}}, "two operands"};
  switch (strategy) {
    case Strategy::automatic: return auto_path(net);
    case Strategy::greedy: return {greedy_path(net), "greedy"};
    case Strategy::optimal: return {optimal_path(net), n > kOptimalMaxOperands ? "dp (optimal above 16 operands)" : "optimal"};
    case Strategy::dp: {
      std::optional<Path> p = dp_path(net);
      if (p) return {std::move(*p), "dp"};
      return {greedy_path(net), "greedy (dp above 64 operands)"};
    }
    case Strategy::branch_1: return {branch_path(net, 1), "branch-1"};
    case Strategy::branch_2: return {branch_path(net, 2), "branch-2"};
    case Strategy::branch_all: return {branch_path(net, 0), "branch-all"};
    case Strategy::left_to_right: return {left_to_right_path(n), "left to right"};
  }
  return {left_to_right_path(n), "left to right"};
}

// ---------------------------------------------------------------- the cache

namespace {

// The key: everything a path depends on, as bytes.
std::string key_of(const Network& net, Strategy strategy) {
  std::string k;
  auto put = [&](const void* p, std::size_t n) { k.append(static_cast<const char*>(p), n); };
  const int s = static_cast<int>(strategy);
  put(&s, sizeof s);
  put(&net.memory_limit, sizeof net.memory_limit);
  put(&net.output, sizeof net.output);
  LabelSet used = net.output;
  for (LabelSet in : net.inputs) {
    put(&in, sizeof in);
    used |= in;
  }
  used.for_each([&](int l) { put(&net.sizes[static_cast<std::size_t>(l)], sizeof(double)); });
  return k;
}

struct Cache {
  std::mutex mutex;
  std::list<std::pair<std::string, std::shared_ptr<const Found>>> lru;  // most recent first
  std::unordered_map<std::string, decltype(lru)::iterator> index;
  int64_t max_size = 1024, hits = 0, misses = 0;

  void trim() {
    while (static_cast<int64_t>(lru.size()) > max_size) {
      index.erase(lru.back().first);
      lru.pop_back();
    }
  }
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: einsum may run during static destruction
  return *c;
}

}  // namespace

std::shared_ptr<const Found> cached_path(const Network& net, Strategy strategy) {
  Cache& c = cache();
  std::string key = key_of(net, strategy);
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.index.find(key);
    if (it != c.index.end()) {
      ++c.hits;
      c.lru.splice(c.lru.begin(), c.lru, it->second);
      return it->second->second;
    }
    ++c.misses;
  }
  // Searched outside the lock: two threads may search the same network once each.
  auto found = std::make_shared<const Found>(find_path(net, strategy));
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.max_size > 0 && !c.index.count(key)) {
    c.lru.emplace_front(key, found);
    c.index.emplace(std::move(key), c.lru.begin());
    c.trim();
  }
  return found;
}

namespace path_cache {
Info info() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return {static_cast<int64_t>(c.lru.size()), c.max_size, c.hits, c.misses};
}
void clear() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.lru.clear();
  c.index.clear();
  c.hits = c.misses = 0;
}
void set_max_size(int64_t n) {
  if (n < 0) throw_bad_value("einsum path cache max_size", std::to_string(n), "an integer >= 0");
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.max_size = n;
  c.trim();
}
}  // namespace path_cache

}  // namespace bp::ops::einsum
