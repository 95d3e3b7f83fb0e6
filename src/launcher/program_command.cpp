#include "launcher/program_command.h"

#include "backplane/error.h"

namespace bp::launcher {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string python_interpreter(const EnvMap& env, const Host& host) {
  auto it = env.find("PYTHON");
  if (it != env.end() && !it->second.empty()) {
    if (auto python = host.find_executable(it->second)) return *python;
    throw_bad_value("PYTHON", "'" + it->second + "'", "a Python interpreter (an executable)");
  }
  if (auto python = host.find_executable("python3")) return *python;
  throw_runtime("run-cpu", "no Python interpreter: $PYTHON is not set and python3 is not on PATH "
                           "(use --no-python to run a program directly)");
}

}  // namespace

std::vector<std::string> program_command(const LaunchOptions& o, const EnvMap& env, const Host& host) {
  if (o.program.empty())
    throw_runtime("run-cpu", "missing program: give the program to run after the options");
  if (o.module && o.no_python)
    throw_runtime("--module", "-m/--module and --no-python cannot be used together");

  std::vector<std::string> command;
  if (o.no_python) {
    auto program = host.find_executable(o.program);
    if (!program)
      throw_runtime("run-cpu", "program not found: '" + o.program +
                                   "' is neither an executable file nor on PATH");
    command.push_back(*program);
  } else {
    // The spec's check, except for -m, whose argument is a module name.
    if (!o.module && !ends_with(o.program, ".py"))
      throw_runtime("run-cpu", "For non Python script, you should use \"--no-python\" parameter.");
    if (!o.module && !host.is_file(o.program))
      throw_runtime("run-cpu", "program not found: no such file '" + o.program + "'");
    command = {python_interpreter(env, host), "-u"};
    if (o.module) command.push_back("-m");
    command.push_back(o.program);
  }
  command.insert(command.end(), o.program_args.begin(), o.program_args.end());
  return command;
}

}  // namespace bp::launcher
