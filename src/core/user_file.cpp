// Note [User files] (user_file.h): bounded reads and safe replacement.

#include "core/user_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "backplane/error.h"

namespace bp::user_file {
namespace {

// How long a saver waits for another process's save to finish.
constexpr auto kLockTimeout = std::chrono::seconds(60);

std::string quoted(const std::string& path) { return "'" + path + "'"; }

[[noreturn]] void fail(const char* op, const std::string& what, const std::string& path, int err) {
  throw_runtime(op, std::string(op) + ": " + what + " " + quoted(path) + ": " + std::strerror(err));
}

// Closes on scope exit; close errors of read-only descriptors do not matter.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

const char* type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Reads an open regular file, at most max_bytes of it.
std::string read_fd(int fd, const std::string& path, std::size_t max_bytes, const char* op) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(op, "cannot stat", path, errno);
  if (!S_ISREG(st.st_mode)) {
    throw_bad_value(op, quoted(path) + " (" + type_name(st.st_mode) + ")", "a regular file");
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    throw_bad_value(op, quoted(path) + " of " + std::to_string(st.st_size) + " bytes",
                    "a file of at most " + std::to_string(max_bytes) + " bytes");
  }
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(op, "cannot read", path, errno);
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {  // grew while we read
      throw_bad_value(op, quoted(path) + " of more than " + std::to_string(max_bytes) + " bytes",
                      "a file of at most " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Opens for reading without blocking (a FIFO would block the open) and
// returns -1 with errno ENOENT when nothing is there.
int open_for_read(const std::string& path, bool follow, const char* op) {
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (!follow) flags |= O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0 && errno != ENOENT) {
    if (errno == ELOOP && !follow) {
      throw_bad_value(op, quoted(path) + " (a symbolic link)",
                      "a regular file (Backplane does not replace a symbolic link; give the path it points to)");
    }
    fail(op, "cannot open", path, errno);
  }
  return fd;
}

void write_all(int fd, const std::string& text, const std::string& path, const char* op) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(op, "cannot write", path, errno);
    }
    if (n == 0) fail(op, "cannot write", path, ENOSPC);
    done += static_cast<std::size_t>(n);
  }
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string random_suffix() {
  thread_local std::mt19937_64 gen{std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 32)};
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string s(12, '0');
  for (char& c : s) c = kDigits[gen() % 36];
  return s;
}

// The lock file "<path>.lock": created if absent, never through a symlink,
// and only a regular file is locked.
int lock(const std::string& path, const char* op) {
  const std::string lock_path = path + ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) fail(op, "cannot open the lock file", lock_path, errno);
  Fd guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(op, "cannot stat", lock_path, errno);
  if (!S_ISREG(st.st_mode)) {
    throw_bad_value(op, "lock file " + quoted(lock_path) + " (" + type_name(st.st_mode) + ")", "a regular file");
  }
  const auto deadline = std::chrono::steady_clock::now() + kLockTimeout;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) fail(op, "cannot lock", lock_path, errno);
    if (std::chrono::steady_clock::now() > deadline) {
      throw_runtime(op, std::string(op) + ": timed out after " + std::to_string(kLockTimeout.count()) +
                            " s waiting for the lock " + quoted(lock_path) + " held by another process");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  guard.fd = -1;
  return fd;  // closing it releases the lock
}

// Writes text to a new temporary file next to path; returns its name.
std::string write_temporary(const std::string& path, const std::string& text, std::optional<mode_t> mode,
                            const char* op) {
  const std::string dir = directory_of(path);
  const std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = dir + "/." + base + ".tmp-" + random_suffix();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0 && errno != EEXIST) fail(op, "cannot create a temporary file in", dir, errno);
  }
  if (fd < 0) fail(op, "cannot create a temporary file in", dir, EEXIST);
  try {
    if (mode && ::fchmod(fd, *mode & 07777) != 0) fail(op, "cannot set the mode of", tmp, errno);
    write_all(fd, text, tmp, op);
    if (::fsync(fd) != 0) fail(op, "cannot flush", tmp, errno);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(op, "cannot close", tmp, err);
  }
  return tmp;
}

}  // namespace

void check_path(const std::string& path, const char* op) {
  if (path.empty()) throw_bad_value(op, "an empty path", "a file path");
  if (path.find('\0') != std::string::npos) {
    std::string shown = path;
    for (char& c : shown)
      if (c == '\0') c = '?';
    throw_bad_value(op, "a path holding a NUL byte ('" + shown + "', NUL shown as '?')", "a path without NUL bytes");
  }
}

std::optional<std::string> read_regular(const std::string& path, std::size_t max_bytes, const char* op) {
  check_path(path, op);
  Fd fd(open_for_read(path, true, op));
  if (fd.fd < 0) return std::nullopt;
  return read_fd(fd.fd, path, max_bytes, op);
}

void replace(const std::string& path, std::size_t max_bytes, const char* op, const Accept& accept,
             const Compose& compose) {
  check_path(path, op);
  // What is there now: absent, or a regular file that is ours.
  std::optional<std::string> current;
  std::optional<mode_t> mode;
  auto read_current = [&] {
    current.reset();
    Fd fd(open_for_read(path, false, op));
    if (fd.fd < 0) return;
    current = read_fd(fd.fd, path, max_bytes, op);
    struct stat st {};
    if (::fstat(fd.fd, &st) == 0) mode = st.st_mode;
    accept(*current);
  };
  read_current();  // before the lock file is created beside it
  Fd lock_fd(lock(path, op));
  read_current();  // another process may have saved meanwhile
  const std::string text = compose(current);
  const std::string tmp = write_temporary(path, text, mode, op);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(op, "cannot replace", path, err);
  }
  // Make the rename itself durable; some file systems refuse a directory
  // fsync (EINVAL), which leaves the data written and is not an error.
  Fd dir(::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd >= 0) ::fsync(dir.fd);
}

}  // namespace bp::user_file
