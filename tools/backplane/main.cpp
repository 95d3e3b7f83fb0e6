// backplane: the command-line face of Backplane.

#include <cstdio>

#include "backplane/error.h"
#include "backplane/version.h"
#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"backplane: discover compute backends, steer their knobs, see what runs"};
  app.set_version_flag("--version", BACKPLANE_VERSION_STRING);
  app.require_subcommand(1);
  bp::cli::add_info_command(app);
  bp::cli::add_run_cpu_command(app);
  bp::cli::add_explain_command(app);
  bp::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const bp::Error& e) {
    std::fprintf(stderr, "backplane: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
