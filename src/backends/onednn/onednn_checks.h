#pragma once
// The checks every oneDNN row of an op starts with (onednn:conv,
// onednn:rnn): mkldnn.enabled, and mkldnn.deterministic = False, since
// oneDNN 2.6 has no deterministic mode (its attribute arrived in 3.0), so
// use_deterministic_algorithms-style requests must pick another row.

#include <vector>

#include "backplane/dispatch_checks.h"

namespace bp::backends::onednn {

template <class Params>
std::vector<dispatch::Check<Params>> mkldnn_gate_checks() {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(enabled<Params>(flags::Id::mkldnn_enabled));
  list.push_back(flag_allows<Params>(
      "deterministic", flags::Id::mkldnn_deterministic,
      [](const Params&, int64_t deterministic) { return deterministic == 0; },
      "mkldnn.deterministic = False (oneDNN 2.6 cannot promise deterministic results)", [](const Params&) {
        return std::string(
            "mkldnn.deterministic = True, and oneDNN 2.6 has no deterministic mode (its attribute arrived in 3.0)");
      }));
  return list;
}

}  // namespace bp::backends::onednn
