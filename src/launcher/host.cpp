#include "launcher/host.h"

#include <fcntl.h>
#include <glob.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "launcher/direct_binding.h"
#include "launcher/library_search.h"

extern char** environ;

namespace bp::launcher {
namespace fs = std::filesystem;
namespace {

bool is_executable_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> search_path(const std::string& name, const EnvMap& env) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos)
    return is_executable_file(name) ? std::optional(name) : std::nullopt;
  auto it = env.find("PATH");
  std::string path = it != env.end() ? it->second : "/usr/local/bin:/usr/bin:/bin";
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

// Runs argv with output discarded; true when it exits with status 0.
bool runs_successfully(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Tries the binding in a throw-away child, exactly as an instance would.
bool child_can_bind_memory(int node) {
  DirectBinding binding = prepare_direct_binding({}, {node});
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(apply_direct_binding(binding) == nullptr ? 0 : 1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

Host real_host(const EnvMap& env) {
  Host host;
  host.find_executable = [env](const std::string& name) { return search_path(name, env); };
  host.is_file = [](const std::string& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec);
  };
  host.glob_matches = [](const std::string& pattern) {
    glob_t found{};
    int rc = glob(pattern.c_str(), GLOB_NOSORT, nullptr, &found);
    bool any = rc == 0 && found.gl_pathc > 0;
    globfree(&found);
    return any;
  };
  std::vector<std::string> dirs = library_search_dirs(env);
  host.find_library = [dirs](const std::string& name) { return find_library_in(name, dirs); };
  host.numactl_works = [](const std::string& numactl, int cpu, int node) {
    return runs_successfully({numactl, "-C", std::to_string(cpu), "-m", std::to_string(node), "true"});
  };
  host.mempolicy_works = child_can_bind_memory;
  return host;
}

EnvMap current_environment() {
  EnvMap env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string item(*entry);
    auto eq = item.find('=');
    if (eq != std::string::npos) env.emplace(item.substr(0, eq), item.substr(eq + 1));
  }
  return env;
}

}  // namespace bp::launcher
