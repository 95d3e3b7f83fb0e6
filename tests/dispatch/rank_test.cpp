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
  const auto keys = ranked_op().key_flags(DeviceType::cpu);
  EXPECT_NE(std::find(keys.begin(), keys.end(), flags::Id::cuda_sdp_priority_order), keys.end());
}

// ---------------------------------------------------------------- keys per device type

bool only_cuda(const RankParams&, Reasons& r) { return r.fail("cuda tensors", "cpu"); }

TEST(KeysPerDevice, ACudaImplementationLeavesCpuEntriesAndKeysAlone) {
  OpConfig config;
  config.name = "device_keys_toy";
  config.autotune[0] = AutotuneFlags{flags::Id::cpu_benchmark, flags::Id::cpu_benchmark_limit};
  Op& op = define_op(config);
  for (const char* name : {"a:x", "b:y", "ref:any"})
    op.add(std::make_unique<Impl<RankParams>>(name, "cpu", Properties{}, std::vector<Check<RankParams>>{},
                                              [](const RankParams&) {}));
  RankParams p;
  Problem pr;
  backends::cpu::flags_guard tune({.benchmark = true});
  const int64_t runs = autotune_runs();
  select(op, pr, &p);
  select(op, pr, &p);
  EXPECT_EQ(autotune_runs(), runs + 1);  // timed once, then cached

  Properties cuda_props;
  cuda_props.device = DeviceType::cuda;
  std::vector<Check<RankParams>> checks;
  checks.push_back(Check<RankParams>{"device", only_cuda, {flags::Id::cuda_cudnn_sdp_enabled}});
  op.add(std::make_unique<Impl<RankParams>>("cuda:z", "cuda", cuda_props, std::move(checks),
                                            [](const RankParams&) {}),
         Position::before_reference);
  select(op, pr, &p);
  EXPECT_EQ(autotune_runs(), runs + 1);  // the CPU entry survived the CUDA registration
  const auto cpu_keys = op.key_flags(DeviceType::cpu), cuda_keys = op.key_flags(DeviceType::cuda);
  EXPECT_EQ(std::find(cpu_keys.begin(), cpu_keys.end(), flags::Id::cuda_cudnn_sdp_enabled), cpu_keys.end());
  EXPECT_NE(std::find(cuda_keys.begin(), cuda_keys.end(), flags::Id::cuda_cudnn_sdp_enabled), cuda_keys.end());
  // A CPU registration does change the CPU candidates: the entry goes.
  op.add(std::make_unique<Impl<RankParams>>("c:w", "cpu", Properties{}, std::vector<Check<RankParams>>{},
                                            [](const RankParams&) {}),
         Position::before_reference);
  select(op, pr, &p);
  EXPECT_EQ(autotune_runs(), runs + 2);
}

}  // namespace
}  // namespace bp::dispatch::testing
