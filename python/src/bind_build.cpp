// What this build was compiled with (the configure summary, as data).

#include <nanobind/stl/string.h>

#include "backplane/build_info.h"
#include "bindings.h"

namespace bp::py {

void bind_build(nb::module_& m) {
  const BuildInfo& info = build_info();
  m.attr("__version__") = info.version;
  nb::dict built, why;
  for (const BuiltBackend& b : info.backends) {
    built[b.name.c_str()] = b.built;
    why[b.name.c_str()] = b.why;
  }
  m.attr("built_with") = built;
  m.attr("built_why") = why;
  m.attr("build_type") = info.build_type;
  m.attr("compiler") = info.compiler;
  m.attr("cuda_toolkit") = info.cuda_toolkit;  // "" without CUDA
}

}  // namespace bp::py
