#pragma once
// The program part of an instance's command: `<python> -u [-m] program
// args...`, or `program args...` with --no-python. The interpreter is
// $PYTHON, else python3 from PATH (the launcher is not itself a Python
// process, so there is no sys.executable to reuse).

#include <string>
#include <vector>

#include "launcher/host.h"
#include "launcher/options.h"

namespace bp::launcher {

// Throws bp::Error for a missing program or interpreter, a non-.py script
// without --no-python, or -m together with --no-python.
std::vector<std::string> program_command(const LaunchOptions& options, const EnvMap& env,
                                         const Host& host);

}  // namespace bp::launcher
