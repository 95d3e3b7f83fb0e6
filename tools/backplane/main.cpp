// backplane: the command-line face of Backplane.

#include <cstdio>
#include <exception>
#include <new>

#include "backplane/error.h"
#include "backplane/version.h"
#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"backplane: discover compute backends, steer their knobs, see what runs"};
  // The subcommands of explain and bench come from the ops; building them
  // loads BACKPLANE_OP_PLUGINS, whose errors must reach the user as messages.
  app.set_version_flag("--version", BACKPLANE_VERSION_STRING);
  app.require_subcommand(1);
  // Every failure is a message and an exit status, never an abort: bad
  // input (a bp::Error) exits 2, anything else (out of memory, a library
  // failing) exits 1.
  try {
    bp::cli::add_info_command(app);
    bp::cli::add_run_cpu_command(app);
    bp::cli::add_explain_command(app);
    bp::cli::add_bench_command(app);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const bp::Error& e) {
    std::fprintf(stderr, "backplane: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "backplane: error: out of memory (a problem too large for this machine?)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backplane: error: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "backplane: error: an unknown failure\n");
    return 1;
  }
  return 0;
}
