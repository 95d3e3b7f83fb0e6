#pragma once
// Each subcommand of the `backplane` tool lives in its own <name>_command.cpp
// and registers itself on the app here. To add one: write add_<name>_command,
// declare it below, call it from main.cpp. `explain` and `bench` have one
// subcommand per declared op (backplane/op_spec.h): nothing here is per op.

#include <CLI/CLI.hpp>

namespace bp::cli {

void add_info_command(CLI::App& app);     // info_command.cpp
void add_run_cpu_command(CLI::App& app);  // run_cpu_command.cpp
void add_explain_command(CLI::App& app);  // explain_command.cpp
void add_bench_command(CLI::App& app);    // bench_command.cpp

}  // namespace bp::cli
