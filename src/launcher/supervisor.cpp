#include "launcher/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "backplane/error.h"
#include "launcher/cpu_list.h"
#include "launcher/direct_binding.h"
#include "launcher/output_tee.h"

namespace bp::launcher {
namespace {

// Note [Signal forwarding]
// The handler sees only these globals. A pid slot is cleared when the child
// is reaped, and reaping happens only while SIGINT/SIGTERM are blocked (they
// are unblocked just inside ppoll), so the handler never signals a reused pid.
// A terminal's Ctrl-C (si_code SI_KERNEL) already reached the children, which
// share our process group, so only signals sent to us alone (kill, timeout,
// a batch system) are forwarded; a second signal of any kind kills them.
constexpr int kMaxInstances = 4096;
std::atomic<pid_t> g_children[kMaxInstances];
std::atomic<int> g_nchildren{0};
volatile sig_atomic_t g_signals = 0;
volatile sig_atomic_t g_first_signal = 0;

void forward_signal(int sig, siginfo_t* info, void*) {
  g_signals = g_signals + 1;
  if (g_first_signal == 0) g_first_signal = sig;
  int send = g_signals >= 2 ? SIGKILL : sig;
  if (send == sig && info != nullptr && info->si_code == SI_KERNEL) return;
  for (int i = 0; i < g_nchildren.load(); ++i) {
    pid_t pid = g_children[i].load();
    if (pid > 0) kill(pid, send);
  }
}

void wake_up(int) {}  // SIGCHLD only has to interrupt ppoll

class SignalScope {
 public:
  SignalScope() {
    sigset_t block;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGCHLD}) sigaddset(&block, sig);
    sigprocmask(SIG_BLOCK, &block, &old_mask_);
    struct sigaction fwd{};
    fwd.sa_sigaction = forward_signal;
    fwd.sa_flags = SA_SIGINFO;
    sigfillset(&fwd.sa_mask);
    sigaction(SIGINT, &fwd, &old_int_);
    sigaction(SIGTERM, &fwd, &old_term_);
    struct sigaction chld{};
    chld.sa_handler = wake_up;
    sigaction(SIGCHLD, &chld, &old_chld_);
    struct sigaction ignore{};
    ignore.sa_handler = SIG_IGN;  // a closed console must not kill the launcher mid-run
    sigaction(SIGPIPE, &ignore, &old_pipe_);
    wait_mask_ = old_mask_;
    for (int sig : {SIGINT, SIGTERM, SIGCHLD}) sigdelset(&wait_mask_, sig);
    g_signals = 0;
    g_first_signal = 0;
    g_nchildren = 0;
  }
  ~SignalScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGCHLD, &old_chld_, nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  const sigset_t& old_mask() const { return old_mask_; }
  const sigset_t& wait_mask() const { return wait_mask_; }

 private:
  sigset_t old_mask_, wait_mask_;
  struct sigaction old_int_, old_term_, old_chld_, old_pipe_;
};

std::vector<std::string> environment_strings(const EnvMap& base, const InstancePlan& inst) {
  EnvMap env = base;
  for (const EnvVar& var : inst.env) env[var.name] = var.value;
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Everything the child needs, built before fork (the child must not allocate).
struct PreparedChild {
  std::vector<std::string> argv_strings, env_strings;
  std::vector<char*> argv, envp;
  DirectBinding binding;
  int log_fd = -1;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
};

[[noreturn]] void exec_child(const PreparedChild& c, const sigset_t& mask, int error_fd) {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) sigaction(sig, &dfl, nullptr);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  const char* failed = nullptr;
  if (c.out_pipe[1] >= 0 && (dup2(c.out_pipe[1], 1) < 0 || dup2(c.err_pipe[1], 2) < 0))
    failed = "dup2";
  if (!failed) failed = apply_direct_binding(c.binding);
  if (!failed) {
    execve(c.argv[0], c.argv.data(), c.envp.data());
    failed = "execve";
  }
  // Report "<call>\n<errno>" to the parent through the close-on-exec pipe.
  int err = errno;
  char buf[64];
  size_t n = 0;
  for (const char* p = failed; *p && n < 40; ++p) buf[n++] = *p;
  buf[n++] = '\n';
  char digits[12];
  int nd = 0;
  do {
    digits[nd++] = static_cast<char>('0' + err % 10);
    err /= 10;
  } while (err > 0 && nd < 11);
  while (nd > 0) buf[n++] = digits[--nd];
  ssize_t ignored = write(error_fd, buf, n);
  (void)ignored;
  _exit(127);
}

std::string read_start_error(int fd) {
  std::string text;
  char buf[64];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  if (text.empty()) return {};
  auto newline = text.find('\n');
  int err = std::atoi(text.c_str() + newline + 1);
  return text.substr(0, newline) + ": " + std::strerror(err);
}

const char* signal_name(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? name : "?";
}

}  // namespace

std::string InstanceOutcome::describe(const std::vector<int>& cpus) const {
  std::string who = "instance " + std::to_string(index) + " (cpus " + format_ranges(cpus) + ")";
  if (!started) return who + " did not start: " + start_error;
  if (signaled)
    return who + " was killed by signal " + std::to_string(code) + " (SIG" + signal_name(code) + ")";
  return who + " exited with status " + std::to_string(code);
}

int RunResult::exit_code() const {
  for (const InstanceOutcome& o : outcomes)
    if (o.failed()) return !o.started ? 127 : o.signaled ? 128 + o.code : o.code;
  return signal_received ? 128 + signal_received : 0;
}

RunResult run_plan(const Plan& plan, const EnvMap& base_env, const Reporter& report) {
  if (plan.instances.size() > static_cast<size_t>(kMaxInstances))
    throw_bad_value("--ninstances", std::to_string(plan.instances.size()),
                    "at most " + std::to_string(kMaxInstances) + " instances per launcher");
  const bool logging = !plan.log_dir.empty();
  if (logging) {
    std::error_code ec;
    std::filesystem::create_directories(plan.log_dir, ec);
    if (ec) throw_runtime("--log-path", "cannot create the log folder '" + plan.log_dir + "': " + ec.message());
  }

  std::vector<PreparedChild> children(plan.instances.size());
  for (size_t i = 0; i < plan.instances.size(); ++i) {
    const InstancePlan& inst = plan.instances[i];
    PreparedChild& c = children[i];
    c.argv_strings = inst.argv;
    c.env_strings = environment_strings(base_env, inst);
    c.argv = pointers(c.argv_strings);
    c.envp = pointers(c.env_strings);
    if (plan.binding.mode == BindMode::direct)
      c.binding = prepare_direct_binding(
          inst.cpus, plan.binding.binds_memory ? inst.memory_nodes : std::vector<int>{});
    if (logging) {
      c.log_fd = open(inst.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (c.log_fd < 0)
        throw_runtime("--log-path", "cannot open the log file '" + inst.log_file + "': " + std::strerror(errno));
      if (pipe2(c.out_pipe, O_CLOEXEC) != 0 || pipe2(c.err_pipe, O_CLOEXEC) != 0)
        throw_runtime("run-cpu", std::string("cannot create a pipe: ") + std::strerror(errno));
    }
  }

  RunResult result;
  OutputTee tee(plan.instances.size() > 1);
  SignalScope signals;
  int live = 0;
  for (size_t i = 0; i < plan.instances.size(); ++i) {
    const InstancePlan& inst = plan.instances[i];
    PreparedChild& c = children[i];
    InstanceOutcome outcome;
    outcome.index = inst.index;
    int error_pipe[2];
    if (pipe2(error_pipe, O_CLOEXEC) != 0) {
      outcome.start_error = std::string("pipe: ") + std::strerror(errno);
    } else if (pid_t pid = fork(); pid < 0) {
      outcome.start_error = std::string("fork: ") + std::strerror(errno);
      close(error_pipe[0]);
      close(error_pipe[1]);
    } else if (pid == 0) {
      exec_child(c, signals.old_mask(), error_pipe[1]);
    } else {
      close(error_pipe[1]);
      outcome.start_error = read_start_error(error_pipe[0]);
      close(error_pipe[0]);
      outcome.pid = pid;
      outcome.started = outcome.start_error.empty();
      g_children[g_nchildren.load()] = pid;  // reaped below even if exec failed
      g_nchildren = g_nchildren + 1;
      ++live;
    }
    if (c.out_pipe[1] >= 0) {
      close(c.out_pipe[1]);
      close(c.err_pipe[1]);
      tee.add(c.out_pipe[0], 1, c.log_fd, inst.index);
      tee.add(c.err_pipe[0], 2, c.log_fd, inst.index);
    }
    report(outcome.started ? "instance " + std::to_string(inst.index) + " started (pid " +
                                 std::to_string(outcome.pid) + ") on cpus " + format_ranges(inst.cpus)
                           : outcome.describe(inst.cpus));
    result.outcomes.push_back(outcome);
  }

  // Wait: forward output until every child is reaped and its pipes are drained.
  while (live > 0 || tee.open_streams() > 0) {
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (int i = 0; i < g_nchildren.load(); ++i)
        if (g_children[i].load() == pid) g_children[i] = 0;
      for (size_t i = 0; i < result.outcomes.size(); ++i) {
        InstanceOutcome& o = result.outcomes[i];
        if (o.pid != pid) continue;
        --live;
        if (!o.started) break;
        o.signaled = WIFSIGNALED(status);
        o.code = o.signaled ? WTERMSIG(status) : WEXITSTATUS(status);
        report(o.describe(plan.instances[i].cpus));
      }
    }
    if (live == 0) {
      // Children are gone; a grandchild may still hold a pipe open, so
      // drain briefly rather than wait for it.
      tee.drain_for_ms(200, signals.wait_mask());
      break;
    }
    tee.wait_and_forward(signals.wait_mask());
  }
  tee.flush_all();
  for (PreparedChild& c : children)
    if (c.log_fd >= 0) close(c.log_fd);
  result.signal_received = g_first_signal;
  g_nchildren = 0;
  return result;
}

}  // namespace bp::launcher
