// Tuned details (Note [Tuned details] in backplane/dispatch.h): an
// implementation's own tuned choice kept in the autotune cache under the
// problem key, saved and loaded with dispatch's winners, missed when a key
// flag changes, bounded and cleared with them.

#include <gtest/gtest.h>

#include <fstream>

#include "backplane/runtime.h"
#include "dispatch/toy_op.h"

namespace bp::dispatch::testing {
namespace {

class TunedDetail : public ::testing::Test {
 protected:
  void SetUp() override {
    autotune_cache::clear();
    path_ = ::testing::TempDir() + "/bp_tuned_detail_" + std::to_string(::getpid());
    std::remove(path_.c_str());
  }
  void TearDown() override {
    autotune_cache::clear();
    std::remove(path_.c_str());
    std::remove((path_ + ".lock").c_str());
  }
  const Implementation& owner() { return *toy_op().find("onednn:gated"); }
  std::string path_;
};

TEST_F(TunedDetail, StoredLookedUpAndKeyedByProblem) {
  EXPECT_EQ(tuned_detail(toy_op(), toy_problem(5), owner()), std::nullopt);
  store_tuned_detail(toy_op(), toy_problem(5), owner(), "engine 7\tknobs 1", 0.5);
  EXPECT_EQ(tuned_detail(toy_op(), toy_problem(5), owner()), "engine 7 knobs 1");  // tabs become spaces
  EXPECT_EQ(tuned_detail(toy_op(), toy_problem(6), owner()), std::nullopt);
  EXPECT_EQ(tuned_detail(toy_op(), toy_problem(5), *toy_op().find("ref:any")), std::nullopt);
  EXPECT_THROW(store_tuned_detail(toy_op(), toy_problem(5), owner(), "", 0), Error);
}

TEST_F(TunedDetail, DispatchWinnersAndDetailsAreSeparateEntries) {
  backends::cpu::flags_guard tuning({.benchmark = true});
  ToyParams p;
  p.size = 5;
  const Implementation& winner = toy_select(p);
  store_tuned_detail(toy_op(), toy_problem(5), owner(), "plan 3", 1.0);
  EXPECT_EQ(&toy_select(p), &winner);
  EXPECT_EQ(tuned_detail(toy_op(), toy_problem(5), owner()), "plan 3");
  EXPECT_EQ(autotune_cache::size(), 2);
}

TEST_F(TunedDetail, SavedAndLoadedByAnotherCacheAndMissedWhenAKeyFlagChanges) {
  store_tuned_detail(toy_op(), toy_problem(9), owner(), "plan 11", 0.25);
  autotune_cache::save(path_);
  std::ifstream in(path_);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("toy/onednn:gated\t"), std::string::npos) << text;
  EXPECT_NE(text.find("\tplan 11\t"), std::string::npos) << text;
  autotune_cache::clear();
  EXPECT_EQ(tuned_detail(toy_op(), toy_problem(9), owner()), std::nullopt);
  EXPECT_EQ(autotune_cache::load(path_), 1);
  EXPECT_EQ(tuned_detail(toy_op(), toy_problem(9), owner()), "plan 11");
  {
    backends::mkldnn::flags_guard off({.enabled = false});  // a flag the op's checks read: another key
    EXPECT_EQ(tuned_detail(toy_op(), toy_problem(9), owner()), std::nullopt);
  }
  EXPECT_EQ(tuned_detail(toy_op(), toy_problem(9), owner()), "plan 11");
}

}  // namespace
}  // namespace bp::dispatch::testing
