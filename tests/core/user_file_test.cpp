// Note [User files]: bounded reads of regular files only, and replacement
// that never follows a planted symlink, never writes over what `accept`
// refuses or over a non-regular file, checks every write and leaves no
// temporary file behind.

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "backplane/error.h"
#include "core/user_file.h"

namespace {

namespace uf = bp::user_file;

class UserFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/bp_user_file_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir_.c_str());
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }
  static void accept_ours(const std::string& text) {
    if (text.rfind("ours", 0) != 0) bp::throw_bad_value("test", "a foreign file", "ours");
  }
  static uf::Compose write(std::string text) {
    return [text](const std::optional<std::string>&) { return text; };
  }

  std::string dir_;
};

TEST_F(UserFile, ReplacesAndMergesUnderTheLock) {
  const std::string p = path("cache");
  uf::replace(p, 1 << 20, "test", accept_ours, write("ours 1\n"));
  EXPECT_EQ(slurp(p), "ours 1\n");
  uf::replace(p, 1 << 20, "test", accept_ours,
              [](const std::optional<std::string>& cur) { return *cur + "ours 2\n"; });
  EXPECT_EQ(slurp(p), "ours 1\nours 2\n");
  // The lock file stays; no temporary file does.
  EXPECT_EQ(entries(), (std::vector<std::string>{"cache", "cache.lock"}));
}

TEST_F(UserFile, RefusesAFileThatIsNotOursAndCreatesNothing) {
  const std::string p = path("notes.txt");
  std::ofstream(p) << "my notes\n";
  EXPECT_THROW(uf::replace(p, 1 << 20, "test", accept_ours, write("ours\n")), bp::Error);
  EXPECT_EQ(slurp(p), "my notes\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"notes.txt"});  // not even a lock file
}

TEST_F(UserFile, RefusesSymlinksAndDevices) {
  const std::string victim = path("victim");
  std::ofstream(victim) << "ours but elsewhere\n";
  const std::string link = path("link");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  try {
    uf::replace(link, 1 << 20, "test", accept_ours, write("ours\n"));
    FAIL() << "a symlink was replaced";
  } catch (const bp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(link), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(victim), "ours but elsewhere\n");
  EXPECT_THROW(uf::replace("/dev/null", 1 << 20, "test", accept_ours, write("ours\n")), bp::Error);
  EXPECT_NE(::access("/dev/null.lock", F_OK), 0);
  EXPECT_THROW(uf::replace(dir_, 1 << 20, "test", accept_ours, write("ours\n")), bp::Error);
}

TEST_F(UserFile, APlantedLockSymlinkIsNotFollowed) {
  const std::string p = path("cache");
  const std::string victim = path("victim");
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(::symlink(victim.c_str(), (p + ".lock").c_str()), 0);
  EXPECT_THROW(uf::replace(p, 1 << 20, "test", accept_ours, write("ours\n")), bp::Error);
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_NE(::access(p.c_str(), F_OK), 0);
}

TEST_F(UserFile, PlantedTemporaryNamesAreNeverUsed) {
  // The old code wrote "<path>.tmp"; a symlink planted there must stay as is.
  const std::string p = path("cache");
  const std::string victim = path("victim");
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(::symlink(victim.c_str(), (p + ".tmp").c_str()), 0);
  uf::replace(p, 1 << 20, "test", accept_ours, write("ours\n"));
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_EQ(slurp(p), "ours\n");
}

TEST_F(UserFile, ReadsOnlyRegularFilesWithABound) {
  EXPECT_FALSE(uf::read_regular(path("absent"), 100, "test"));
  EXPECT_THROW(uf::read_regular("/dev/zero", 100, "test"), bp::Error);
  EXPECT_THROW(uf::read_regular(dir_, 100, "test"), bp::Error);
  const std::string big = path("big");
  std::ofstream(big) << std::string(101, 'x');
  EXPECT_THROW(uf::read_regular(big, 100, "test"), bp::Error);
  EXPECT_EQ(uf::read_regular(big, 101, "test"), std::string(101, 'x'));
}

TEST_F(UserFile, AFifoNeitherBlocksAReadNorIsReplaced) {
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read = std::async(std::launch::async, [&] {
    try {
      uf::read_regular(fifo, 100, "test");
    } catch (const bp::Error&) {
      return true;
    }
    return false;
  });
  if (read.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(::open(fifo.c_str(), O_RDWR));  // unblock it so the test can end
    FAIL() << "reading a FIFO blocked";
  }
  EXPECT_TRUE(read.get());
  auto save = std::async(std::launch::async, [&] {
    try {
      uf::replace(fifo, 100, "test", accept_ours, write("ours\n"));
    } catch (const bp::Error&) {
      return true;
    }
    return false;
  });
  if (save.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::close(::open(fifo.c_str(), O_RDWR));
    FAIL() << "replacing a FIFO blocked";
  }
  EXPECT_TRUE(save.get());
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(UserFile, NulBytesInPathsAreRefused) {
  const std::string p = path("a") + std::string(1, '\0') + "b";
  EXPECT_THROW(uf::read_regular(p, 100, "test"), bp::Error);
  EXPECT_THROW(uf::replace(p, 100, "test", accept_ours, write("ours\n")), bp::Error);
  EXPECT_EQ(entries(), std::vector<std::string>{});
}

// A full disk, simulated with a file-size limit: the write fails, the error
// says so, the old file is intact and the temporary file is gone.
TEST_F(UserFile, AFailedWriteLeavesTheOldFile) {
  const std::string p = path("cache");
  uf::replace(p, 1 << 20, "test", accept_ours, write("ours, old\n"));
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    uf::replace(p, 1 << 20, "test", accept_ours, write("ours\n" + std::string(100000, 'x')));
  } catch (const bp::Error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find("cannot write"), std::string::npos) << message;
  EXPECT_EQ(slurp(p), "ours, old\n");
  EXPECT_EQ(entries(), (std::vector<std::string>{"cache", "cache.lock"}));
}

}  // namespace
