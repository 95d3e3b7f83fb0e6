// `backplane info [--json] [--selftest]`: what this build contains, what this
// machine can run, and the value and source of every flag.

#include <cstdio>
#include <memory>

#include "commands.h"
#include "info_report.h"

namespace bp::cli {

void add_info_command(CLI::App& app) {
  struct Options {
    bool json = false;
    bool selftest = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("info", "Show the build, the backends of this machine and every flag");
  cmd->add_flag("--json", opts->json, "Print one JSON document instead of text");
  cmd->add_flag("--selftest", opts->selftest,
                "Also run a tiny CUDA kernel end to end (skipped when CUDA is not available)");
  cmd->callback([opts] {
    auto report = info::gather();
    bool failed = false;
    if (opts->selftest) {
      report["selftest"] = info::run_selftest();
      failed = report["selftest"]["ran"].get<bool>() && !report["selftest"]["ok"].get<bool>();
    }
    const std::string text = opts->json ? report.dump(2) + "\n" : info::render_text(report);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    // A failed selftest is the command's failure; a skipped one is not.
    if (failed) throw CLI::RuntimeError(1);
  });
}

}  // namespace bp::cli
