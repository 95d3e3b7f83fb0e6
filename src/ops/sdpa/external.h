#pragma once
// SDPA implementations supplied at run time: what nn.attention's
// flash-attention registry installs (activate_flash_attention_impl calls a
// provider's register_fn, which calls install_flash_attention). Each joins
// the sdpa list as "flash:<name>" at the front, so it is tried first and
// ranks as flash in cuda.sdp_priority_order; it is governed by
// cuda.flash_sdp_enabled like the built-in flash kernels, and removing it
// (restore_flash_attention_impl) takes it out of the list again.

#include <functional>
#include <string>

#include "ops/sdpa/params.h"

namespace bp::ops::sdpa {

struct External {
  std::string name;           // the list shows "flash:<name>"
  DeviceType device = DeviceType::cpu;
  // Computes the call into p.out (Note [SDPA params]); may throw.
  std::function<void(const Params&)> run;
  // Whether it takes this call; `why` says why not (explain's reason).
  std::function<bool(const Params&, std::string& why)> accepts;
};

// ValueError when the name is taken or malformed; returns the list name.
std::string install_external(External e);
// ValueError when no external implementation has that list name.
void remove_external(const std::string& list_name);

}  // namespace bp::ops::sdpa
