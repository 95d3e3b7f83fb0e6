// PLACEHOLDER (being written): backplane info.
#include "commands.h"
namespace bp::cli { void add_info_command(CLI::App& app) { app.add_subcommand("info", "Show backends and flags"); } }
