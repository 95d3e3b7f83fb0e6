// Note [Small problems on fewer threads]: an op's flops_per_thread caps the
// OpenMP team of a small CPU problem for the call (and only for the call);
// without a grain every thread stays available.

#include <gtest/gtest.h>

#include "backplane/dispatch.h"
#include "backplane/runtime.h"
#include "core/threads.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using namespace bp;
using namespace bp::dispatch;

struct TeamParams {
  mutable int seen = 0;  // omp_get_max_threads() inside the implementation
};

int max_threads_now() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

Op& team_op(const char* name, double grain) {
  OpConfig config;
  config.name = name;
  config.signature = {"flops"};
  config.flops = [](const int64_t* d) { return static_cast<double>(d[0]); };
  config.flops_per_thread = grain;
  Op& o = define_op(config);
  o.add(std::make_unique<Impl<TeamParams>>("builtin:seen", "cpu", Properties{}, std::vector<Check<TeamParams>>{},
                                           [](const TeamParams& p) { p.seen = max_threads_now(); }));
  return o;
}

Op& grained_op() {
  static Op& op = team_op("team_grained", 1e6);
  return op;
}
Op& plain_op() {
  static Op& op = team_op("team_plain", 0);
  return op;
}

int seen_for(Op& op, int64_t flops) {
  TeamParams p;
  execute(op, op.problem(Device::cpu(), DType::f32, 0, {flops}), &p);
  return p.seen;
}

TEST(TeamLimit, ThreadsForWorkFollowTheGrain) {
  set_num_threads(2);
  threads::apply_num_threads_to_this_thread();
  const int all = threads::team_size(INT64_MAX);
  EXPECT_EQ(threads::threads_for_work(10, 1e6), 1);
  EXPECT_EQ(threads::threads_for_work(1.5e6, 1e6), 1);
  EXPECT_EQ(threads::threads_for_work(2e6, 1e6), std::min(all, 2));
  EXPECT_EQ(threads::threads_for_work(1e12, 1e6), all);
  EXPECT_EQ(threads::threads_for_work(10, 0), all);  // no grain: every thread
}

TEST(TeamLimit, SmallProblemsRunOnOneThreadAndTheSettingComesBack) {
  set_num_threads(2);
  threads::apply_num_threads_to_this_thread();
  const int before = max_threads_now();
  EXPECT_EQ(seen_for(grained_op(), 1000), 1);
  EXPECT_EQ(max_threads_now(), before);  // restored after the call
  EXPECT_EQ(seen_for(grained_op(), int64_t{1} << 40), before);
  EXPECT_EQ(seen_for(plain_op(), 1000), before);  // no grain declared
  {
    threads::ScopedTeamLimit limit(1);
    EXPECT_EQ(max_threads_now(), 1);
    threads::ScopedTeamLimit wider(8);  // never raises
    EXPECT_EQ(max_threads_now(), 1);
  }
  EXPECT_EQ(max_threads_now(), before);
}

}  // namespace
