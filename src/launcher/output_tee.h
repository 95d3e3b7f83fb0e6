#pragma once
// Copies the children's stdout and stderr, read from pipes, into each
// instance's log file and onto the launcher's own stdout/stderr. With more
// than one instance the console copy is prefixed "[instance N] " line by
// line, so interleaved output stays readable; the log file gets the bytes
// unchanged.

#include <signal.h>

#include <string>
#include <vector>

namespace bp::launcher {

class OutputTee {
 public:
  explicit OutputTee(bool prefix_lines) : prefix_lines_(prefix_lines) {}
  ~OutputTee();
  OutputTee(const OutputTee&) = delete;
  OutputTee& operator=(const OutputTee&) = delete;

  // Takes ownership of `pipe_fd`; `console_fd` is 1 or 2; `log_fd` is borrowed.
  void add(int pipe_fd, int console_fd, int log_fd, int instance);
  size_t open_streams() const;
  // Waits (with `mask` as the signal mask, so a signal or SIGCHLD wakes it)
  // until output arrives, then forwards it. Returns after one round.
  void wait_and_forward(const sigset_t& mask);
  // Forwards until the pipes close or stay quiet for `quiet_ms`, then closes them.
  void drain_for_ms(int quiet_ms, const sigset_t& mask);
  // Writes any unfinished last line.
  void flush_all();

 private:
  struct Stream {
    int fd, console, log, instance;
    std::string partial_line;
  };
  // Returns the number of streams that had an event; -1 on interruption.
  int poll_once(const struct timespec* timeout, const sigset_t& mask);
  void forward(Stream& s, const char* data, size_t size);
  void close_stream(Stream& s);

  bool prefix_lines_;
  std::vector<Stream> streams_;
};

}  // namespace bp::launcher
