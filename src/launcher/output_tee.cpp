#include "launcher/output_tee.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace bp::launcher {
namespace {

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed console or full disk must not stop the instances
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

OutputTee::~OutputTee() {
  for (Stream& s : streams_) close_stream(s);
}

void OutputTee::add(int pipe_fd, int console_fd, int log_fd, int instance) {
  streams_.push_back({pipe_fd, console_fd, log_fd, instance, {}});
}

size_t OutputTee::open_streams() const {
  size_t n = 0;
  for (const Stream& s : streams_) n += s.fd >= 0;
  return n;
}

int OutputTee::poll_once(const struct timespec* timeout, const sigset_t& mask) {
  std::vector<pollfd> fds;
  std::vector<Stream*> owners;
  for (Stream& s : streams_)
    if (s.fd >= 0) {
      fds.push_back({s.fd, POLLIN, 0});
      owners.push_back(&s);
    }
  int ready = ppoll(fds.data(), fds.size(), timeout, &mask);
  if (ready <= 0) return ready == 0 ? 0 : -1;
  char buf[65536];
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    ssize_t n = read(fds[i].fd, buf, sizeof buf);
    if (n > 0)
      forward(*owners[i], buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      close_stream(*owners[i]);
  }
  return ready;
}

void OutputTee::wait_and_forward(const sigset_t& mask) { poll_once(nullptr, mask); }

void OutputTee::drain_for_ms(int quiet_ms, const sigset_t& mask) {
  struct timespec timeout{quiet_ms / 1000, (quiet_ms % 1000) * 1000000L};
  while (open_streams() > 0 && poll_once(&timeout, mask) != 0) {
  }
  for (Stream& s : streams_) close_stream(s);
}

void OutputTee::flush_all() {
  for (Stream& s : streams_)
    if (!s.partial_line.empty()) {
      std::string line = "[instance " + std::to_string(s.instance) + "] " + s.partial_line + "\n";
      write_all(s.console, line.data(), line.size());
      s.partial_line.clear();
    }
}

void OutputTee::forward(Stream& s, const char* data, size_t size) {
  if (s.log >= 0) write_all(s.log, data, size);
  if (!prefix_lines_) {
    write_all(s.console, data, size);
    return;
  }
  s.partial_line.append(data, size);
  size_t start = 0, newline;
  std::string out;
  while ((newline = s.partial_line.find('\n', start)) != std::string::npos) {
    out += "[instance " + std::to_string(s.instance) + "] ";
    out.append(s.partial_line, start, newline + 1 - start);
    start = newline + 1;
  }
  s.partial_line.erase(0, start);
  write_all(s.console, out.data(), out.size());
}

void OutputTee::close_stream(Stream& s) {
  if (s.fd >= 0) close(s.fd);
  s.fd = -1;
}

}  // namespace bp::launcher
