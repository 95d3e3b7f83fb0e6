// The autotune cache file (DESIGN.md §10): versioned, merged with what is
// on disk, never written over a file that is not a cache or over anything
// but a regular file, read with a bound, older formats dropped with one
// warning. The low-level file handling is tested in core/user_file_test.cpp.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <vector>

#include "backplane/log.h"
#include "backplane/runtime.h"
#include "dispatch/toy_op.h"

namespace bp::dispatch::testing {
namespace {

class AutotuneFile : public ::testing::Test {
 protected:
  void SetUp() override {
    autotune_cache::clear();
    std::string tmpl = ::testing::TempDir() + "/bp_autotune_file_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    previous_ = log::set_warning_handler([this](const std::string& m) { warnings_.push_back(m); });
  }
  void TearDown() override {
    log::set_warning_handler(previous_);
    autotune_cache::clear();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void tune(int64_t size) {
    ToyParams p;
    p.size = size;
    toy_select(p);
  }
  static int count_lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

  std::string dir_;
  std::vector<std::string> warnings_;
  log::WarningHandler previous_;
  backends::cpu::flags_guard tuning_{{.benchmark = true}};
};

TEST_F(AutotuneFile, HeaderIsVersionTwo) {
  tune(1);
  const std::string path = dir_ + "/cache";
  autotune_cache::save(path);
  EXPECT_EQ(slurp(path).rfind("# backplane autotune cache v2\n", 0), 0u) << slurp(path);
}

TEST_F(AutotuneFile, RefusesToWriteOverAFileThatIsNotACache) {
  tune(1);
  const std::string path = dir_ + "/passwd";
  std::ofstream(path) << "root:x:0:0:root:/root:/bin/bash\n";
  try {
    autotune_cache::save(path);
    FAIL() << "saved over a foreign file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("autotune_cache.save"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(path), "root:x:0:0:root:/root:/bin/bash\n");
}

TEST_F(AutotuneFile, RefusesDevicesSymlinksAndNulPaths) {
  tune(1);
  EXPECT_THROW(autotune_cache::save("/dev/null"), Error);
  const std::string target = dir_ + "/real";
  autotune_cache::save(target);
  const std::string before = slurp(target);
  ASSERT_EQ(::symlink(target.c_str(), (dir_ + "/link").c_str()), 0);
  tune(2);
  EXPECT_THROW(autotune_cache::save(dir_ + "/link"), Error);
  EXPECT_EQ(slurp(target), before);
  EXPECT_THROW(autotune_cache::save(dir_ + "/a" + std::string(1, '\0') + "b"), Error);
  EXPECT_THROW(autotune_cache::load(dir_ + "/real" + std::string(1, '\0') + "x"), Error);
}

TEST_F(AutotuneFile, LoadRefusesDevicesAndFifosWithoutBlocking) {
  EXPECT_THROW(autotune_cache::load("/dev/zero"), Error);
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto done = std::async(std::launch::async, [&] {
    try {
      autotune_cache::load(fifo);
    } catch (const Error&) {
      return true;
    }
    return false;
  });
  if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(::open(fifo.c_str(), O_RDWR));  // unblock the reader so the test can end
    FAIL() << "load() blocked on a FIFO";
  }
  EXPECT_TRUE(done.get());
}

TEST_F(AutotuneFile, SaveMergesWithEntriesAnotherProcessSaved) {
  const std::string path = dir_ + "/cache";
  tune(1);
  autotune_cache::save(path);  // "another process": entry 1 only
  autotune_cache::clear();
  tune(2);
  autotune_cache::save(path);  // this one holds entry 2 only
  const std::string text = slurp(path);
  EXPECT_EQ(count_lines(text), 3) << text;  // header, 1, 2
  autotune_cache::clear();
  EXPECT_EQ(autotune_cache::load(path), 2);
  // Saving again does not duplicate what is both in memory and on disk.
  autotune_cache::save(path);
  EXPECT_EQ(count_lines(slurp(path)), 3) << slurp(path);
}

TEST_F(AutotuneFile, OldFormatIsDroppedWithOneWarningAndReplacedOnSave) {
  const std::string path = dir_ + "/cache";
  std::ofstream(path) << "# backplane autotune cache v1\n"
                      << "toy\tcpu\t2\tf32\t0x0\t10\t\t\topenblas:nondet\t0.1\n";
  EXPECT_EQ(autotune_cache::load(path), 0);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("older format v1"), std::string::npos) << warnings_[0];
  tune(1);
  autotune_cache::save(path);  // ours, so it may be replaced
  EXPECT_EQ(slurp(path).rfind("# backplane autotune cache v2\n", 0), 0u);
  EXPECT_EQ(count_lines(slurp(path)), 2) << slurp(path);
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_F(AutotuneFile, NewerFormatIsNeitherReadNorReplaced) {
  const std::string path = dir_ + "/cache";
  std::ofstream(path) << "# backplane autotune cache v3\nsomething new\n";
  EXPECT_EQ(autotune_cache::load(path), 0);
  EXPECT_EQ(warnings_.size(), 1u);
  tune(1);
  EXPECT_THROW(autotune_cache::save(path), Error);
  EXPECT_EQ(slurp(path), "# backplane autotune cache v3\nsomething new\n");
}

TEST_F(AutotuneFile, AnEmptyFileIsAnEmptyCache) {
  const std::string path = dir_ + "/cache";
  std::ofstream{path};
  EXPECT_EQ(autotune_cache::load(path), 0);
  tune(1);
  autotune_cache::save(path);
  EXPECT_EQ(count_lines(slurp(path)), 2);
}

// Keys hold up to Problem::kMaxDims dims, and the file keeps them all.
TEST_F(AutotuneFile, KeysWithTheMostDimsRoundTrip) {
  std::vector<const char*> names(Problem::kMaxDims, "d");
  Problem prob = toy_problem(1);
  prob.ndims = Problem::kMaxDims;
  for (int i = 0; i < Problem::kMaxDims; ++i) prob.dims[i] = i + 1;
  prob.dim_names = names.data();
  ToyParams p;
  select(toy_op(), prob, &p);
  const std::string path = dir_ + "/cache";
  autotune_cache::save(path);
  autotune_cache::clear();
  EXPECT_EQ(autotune_cache::load(path), 1);
  const int64_t before = autotune_runs();
  select(toy_op(), prob, &p);
  EXPECT_EQ(autotune_runs(), before);  // found, not timed again
  // One more dim than a key holds: the file is rejected with a clear error.
  std::string text = slurp(path);
  const auto dims = text.find("\t1,2,");
  ASSERT_NE(dims, std::string::npos) << text;
  text.insert(dims + 1, "0,");
  std::ofstream(path) << text;
  autotune_cache::clear();
  EXPECT_EQ(autotune_cache::load(path), 0);  // skipped, not trusted
  select(toy_op(), prob, &p);
  EXPECT_EQ(autotune_runs(), before + 1);
}

}  // namespace
}  // namespace bp::dispatch::testing
