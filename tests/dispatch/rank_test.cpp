// OpConfig::rank: a run-time order read from a flag (as sdpa on CUDA reads
// cuda.sdp_priority_order), applied before the preferred library moves
// first, and part of the autotune key.

#include <gtest/gtest.h>

#include <algorithm>

#include "backplane/dispatch.h"
#include "backplane/flags.h"

namespace bp::dispatch::testing {
namespace {

struct RankParams {};

// "a:x" ranks by the first entry of the priority order, "b:y" by the
// second; "ref:any" always last.
int rank_by_order(const Implementation& impl, const Problem&) {
  const int64_t order = flags::get_raw(flags::Id::cuda_sdp_priority_order);
  if (impl.library() == "ref") return 100;
  const int want = impl.library() == "a" ? 1 : 2;  // flash, efficient in SDPBackend numbers
  for (int i = 0; i < 5; ++i)
    if (flags::order_at(order, i) == want) return i;
  return 50;
}

Op& ranked_op() {
  static Op& op = [] () -> Op& {
    OpConfig config;
    config.name = "ranked_toy";
    config.preferred_library[0] = flags::Id::cpu_preferred_blas_library;
    config.rank = rank_by_order;
    config.rank_reads = {flags::Id::cuda_sdp_priority_order};
    Op& o = define_op(config);
    for (const char* name : {"a:x", "onednn:y", "ref:any"}) {
      o.add(std::make_unique<Impl<RankParams>>(name, "cpu", Properties{}, std::vector<Check<RankParams>>{},
                                               [](const RankParams&) {}));
    }
    return o;
  }();
  return op;
}

std::vector<std::string> order_of(const Decision& d) {
  std::vector<std::string> names;
  for (const Row& r : d.rows) names.push_back(r.implementation);
  return names;
}

int64_t order(std::initializer_list<int> backends) {
  std::vector<int> v(backends);
  return flags::pack_order(v.data(), static_cast<int>(v.size()));
}

TEST(Rank, SortsTheListByTheRankFunction) {
  RankParams p;
  Problem pr;
  // Default order: flash (1) before efficient (2): a:x (rank 0), onednn:y (rank 1).
  EXPECT_EQ(order_of(explain(ranked_op(), pr, &p)), (std::vector<std::string>{"a:x", "onednn:y", "ref:any"}));
  backends::cuda::flags_guard g({.sdp_priority_order = order({2, 1, 0, 3, 4})});
  EXPECT_EQ(order_of(explain(ranked_op(), pr, &p)), (std::vector<std::string>{"onednn:y", "a:x", "ref:any"}));
  EXPECT_EQ(select(ranked_op(), pr, &p).name(), "onednn:y");
}

TEST(Rank, PreferredLibraryStillMovesFirst) {
  RankParams p;
  Problem pr;
  backends::cpu::flags_guard g({.preferred_blas_library = backends::CpuBlasBackend::Onednn});
  EXPECT_EQ(order_of(explain(ranked_op(), pr, &p)).front(), "onednn:y");
  EXPECT_EQ(select(ranked_op(), pr, &p).name(), "onednn:y");
}

TEST(Rank, ItsFlagsJoinTheAutotuneKey) {
  const auto keys = ranked_op().key_flags();
  EXPECT_NE(std::find(keys.begin(), keys.end(), flags::Id::cuda_sdp_priority_order), keys.end());
}

}  // namespace
}  // namespace bp::dispatch::testing
