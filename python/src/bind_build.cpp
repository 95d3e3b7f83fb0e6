// What this build was compiled with (the configure summary, as data).

#include <nanobind/stl/string.h>

#include "backplane/version.h"
#include "backplane_build_config.h"
#include "bindings.h"

namespace bp::py {

void bind_build(nb::module_& m) {
  m.attr("__version__") = BACKPLANE_VERSION_STRING;
  nb::dict built;
  built["openmp"] = bool(BP_HAVE_OPENMP);
  built["cpuinfo"] = bool(BP_HAVE_CPUINFO);
  built["openblas"] = bool(BP_HAVE_OPENBLAS);
  built["onednn"] = bool(BP_HAVE_ONEDNN);
  built["fftw"] = bool(BP_HAVE_FFTW);
  built["cuda"] = bool(BP_HAVE_CUDA);
  built["cublas"] = bool(BP_HAVE_CUBLAS);
  built["cublaslt"] = bool(BP_HAVE_CUBLASLT);
  built["cudnn"] = bool(BP_HAVE_CUDNN);
  built["cufft"] = bool(BP_HAVE_CUFFT);
  built["cusolver"] = bool(BP_HAVE_CUSOLVER);
  m.attr("built_with") = built;
  m.attr("build_type") = BP_BUILD_TYPE;
  m.attr("compiler") = BP_CXX_COMPILER;
}

}  // namespace bp::py
