// PLACEHOLDER (being written): backplane run-cpu.
#include "commands.h"
namespace bp::cli { void add_run_cpu_command(CLI::App& app) { app.add_subcommand("run-cpu", "CPU launcher"); } }
