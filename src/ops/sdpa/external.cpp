// SDPA implementations supplied at run time (external.h).

#include "ops/sdpa/external.h"

#include <cctype>

#include "backplane/dispatch_checks.h"
#include "ops/sdpa/impls.h"

namespace bp::ops::sdpa {

std::string install_external(External e) {
  bool ok = !e.name.empty() && e.run;
  for (char c : e.name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  if (!ok)
    throw_bad_value("flash attention implementation name", "'" + e.name + "'",
                    "letters, digits, '_', '-' or '.', and a run function");
  const std::string list_name = "flash:" + e.name;
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::enabled<Params>(flags::Id::cuda_flash_sdp_enabled,
                                                     "flash attention enabled (backends.cuda.enable_flash_sdp(True))"));
  if (e.accepts)
    checks.push_back({"accepts", [accepts = e.accepts](const Params& p, dispatch::Reasons& r) {
                        std::string why;
                        return accepts(p, why) ||
                               r.fail("a call its provider accepts", why.empty() ? "refused" : why);
                      }});
  dispatch::Properties props;
  props.device = e.device;
  props.workspace = "whatever the provider's kernel takes";
  const char* backend = e.device == DeviceType::cuda ? "cuda" : "cpu";
  sdpa_op().add(std::make_unique<dispatch::Impl<Params>>(list_name, backend, props, std::move(checks), e.run),
                dispatch::Position::front);
  return list_name;
}

void remove_external(const std::string& list_name) {
  if (list_name.rfind("flash:", 0) != 0 || list_name == "flash:cpu")
    throw_bad_value("flash attention implementation", "'" + list_name + "'", "an installed one (flash:<name>)");
  sdpa_op().remove(list_name);
}

}  // namespace bp::ops::sdpa
