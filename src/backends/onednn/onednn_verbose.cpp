// Connects flag row mkldnn.verbose_level to oneDNN (Note [oneDNN verbose flag]
// in backplane/backends/onednn.h).

#include <oneapi/dnnl/dnnl.h>

#include <mutex>
#include <string>

#include "backplane/backends/onednn.h"
#include "backplane/flags.h"
#include "backplane/log.h"

namespace bp::backends::mkldnn {

void connect_verbose_flag() {
  static std::once_flag once;
  std::call_once(once, [] {
    const flags::Id id = flags::Id::mkldnn_verbose_level;
    flags::on_change(id, "oneDNN's own verbose switch (process-wide)", [id](int64_t level) {
      // The registration call carries the default: leave oneDNN's own env
      // (DNNL_VERBOSE) alone until the row is set by env or API.
      if (flags::source(id) == flags::Source::Default) return;
      if (dnnl_set_verbose(static_cast<int>(level)) != dnnl_success)
        log::warn("oneDNN refused verbose level " + std::to_string(level) +
                  " (this oneDNN may be built without verbose support)");
    });
  });
}

}  // namespace bp::backends::mkldnn

namespace {
// Registered at load: on_change does not read the environment, so this is
// safe before the Python package installs its warning handler.
const bool verbose_flag_connected = (bp::backends::mkldnn::connect_verbose_flag(), true);
}  // namespace
