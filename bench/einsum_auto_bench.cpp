// How close einsum's "auto" path comes to dp's (the cheapest path without
// outer products) and how long its search takes, on seeded random networks
// (src/ops/einsum/random_network.h), per operand count. Built and run by
// bench/run_einsum_auto_bench.sh.
//
// Times are per-thread CPU time (CLOCK_THREAD_CPUTIME_ID), the least of
// --repeat searches per network: on a machine shared with other jobs,
// wall-clock time counts the time this thread waited for a core. Each
// network's search starts afresh (no path cache).
//
//   einsum_auto_bench [--from 16] [--to 30] [--step 2] [--networks 40]
//                     [--repeat 3] [--kind regular|chain|both] [--show-misses]
//                     [--first-seed 0]   (network s of n operands: seed 7919 n + first-seed + s)
//                     [--dp-cache FILE]  (dp's costs, read from FILE and added to it: dp takes
//                                         seconds a network at 30 operands, its answer never changes)

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ops/einsum/paths.h"
#include "ops/einsum/random_network.h"

using namespace bp::ops::einsum;

namespace {

double cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e6 * static_cast<double>(t.tv_sec) + 1e-3 * static_cast<double>(t.tv_nsec);
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Options {
  int from = 16, to = 30, step = 2, networks = 40, repeat = 3;
  unsigned first_seed = 0;
  std::vector<RandomKind> kinds = {RandomKind::regular, RandomKind::chain};
  bool show_misses = false;
  std::string dp_cache;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "einsum_auto_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--from") o.from = std::atoi(value());
    else if (a == "--to") o.to = std::atoi(value());
    else if (a == "--step") o.step = std::atoi(value());
    else if (a == "--networks") o.networks = std::atoi(value());
    else if (a == "--repeat") o.repeat = std::atoi(value());
    else if (a == "--show-misses") o.show_misses = true;
    else if (a == "--dp-cache") o.dp_cache = value();
    else if (a == "--first-seed") o.first_seed = static_cast<unsigned>(std::atol(value()));
    else if (a == "--kind") {
      const std::string k = value();
      if (k == "regular") o.kinds = {RandomKind::regular};
      else if (k == "chain") o.kinds = {RandomKind::chain};
      else if (k != "both") {
        std::fprintf(stderr, "einsum_auto_bench: --kind '%s': allowed regular, chain, both\n", k.c_str());
        std::exit(2);
      }
    } else {
      std::fprintf(stderr, "einsum_auto_bench: unknown argument '%s'\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.from < 3 || o.to > 64 || o.step < 1 || o.networks < 1 || o.repeat < 1) {
    std::fprintf(stderr, "einsum_auto_bench: need 3 <= --from, --to <= 64, --step, --networks, --repeat >= 1\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  // (kind, n, seed) -> dp's cost, with "kind n seed cost" lines in the file.
  std::map<std::tuple<int, int, unsigned>, double> dp_costs;
  if (!o.dp_cache.empty())
    if (FILE* f = std::fopen(o.dp_cache.c_str(), "r")) {
      int k = 0, n = 0;
      unsigned seed = 0;
      double c = 0;
      while (std::fscanf(f, "%d %d %u %lf", &k, &n, &seed, &c) == 4) dp_costs[{k, n, seed}] = c;
      std::fclose(f);
    }
  FILE* cache_out = o.dp_cache.empty() ? nullptr : std::fopen(o.dp_cache.c_str(), "a");
  std::printf("%-8s %3s %4s %10s %10s %10s %10s %10s %10s\n", "kind", "n", "nets", ">1.2x dp", "worst", "median",
              "auto_med", "auto_max", "dp_med");
  std::printf("%-8s %3s %4s %10s %10s %10s %10s %10s %10s\n", "", "", "", "(fraction)", "cost/dp", "cost/dp",
              "(us cpu)", "(us cpu)", "(us cpu)");
  double all_worst_ratio = 0;
  std::vector<double> all_us;  // every network's search time
  int all_misses = 0, all_networks = 0;
  for (RandomKind kind : o.kinds) {
    const char* kind_name = kind == RandomKind::regular ? "regular" : "chain";
    for (int n = o.from; n <= o.to; n += o.step) {
      std::vector<double> ratios, auto_us, dp_us;
      int misses = 0;
      for (int s = 0; s < o.networks; ++s) {
        const unsigned seed = 7919u * static_cast<unsigned>(n) + o.first_seed + static_cast<unsigned>(s);
        const Network net = random_network(kind, n, seed);
        const auto key = std::make_tuple(static_cast<int>(kind), n, seed);
        double dp_cost = 0, t0 = 0;
        if (auto it = dp_costs.find(key); it != dp_costs.end()) {
          dp_cost = it->second;
        } else {
          t0 = cpu_us();
          const std::optional<Path> dp = dp_path(net);
          dp_us.push_back(cpu_us() - t0);
          dp_cost = evaluate(net, *dp).opt_cost;
          if (cache_out) std::fprintf(cache_out, "%d %d %u %.17g\n", static_cast<int>(kind), n, seed, dp_cost);
        }
        double best = 1e300;
        Found a;
        for (int r = 0; r < o.repeat; ++r) {
          t0 = cpu_us();
          a = auto_path(net);
          best = std::min(best, cpu_us() - t0);
        }
        auto_us.push_back(best);
        const double ratio = evaluate(net, a.path).opt_cost / dp_cost;
        ratios.push_back(ratio);
        if (ratio > 1.2) {
          ++misses;
          if (o.show_misses) std::printf("  miss: %s n=%d seed=%u ratio=%.3f (%s)\n", kind_name, n, seed, ratio, a.how.c_str());
        }
      }
      std::printf("%-8s %3d %4d %10.3f %10.3f %10.3f %10.0f %10.0f %10.0f\n", kind_name, n, o.networks,
                  static_cast<double>(misses) / o.networks, quantile(ratios, 1), quantile(ratios, 0.5),
                  quantile(auto_us, 0.5), quantile(auto_us, 1), dp_us.empty() ? 0.0 : quantile(dp_us, 0.5));
      std::fflush(stdout);
      all_worst_ratio = std::max(all_worst_ratio, quantile(ratios, 1));
      all_us.insert(all_us.end(), auto_us.begin(), auto_us.end());
      all_misses += misses;
      all_networks += o.networks;
    }
  }
  if (cache_out) std::fclose(cache_out);
  std::printf("all: %d of %d networks > 1.2x dp, worst %.3fx; auto us cpu: slowest %.0f, p99 %.0f, median %.0f\n",
              all_misses, all_networks, all_worst_ratio, quantile(all_us, 1), quantile(all_us, 0.99), quantile(all_us, 0.5));
  return 0;
}
