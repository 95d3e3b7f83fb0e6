#pragma once
// One probe per backend: builds its BackendInfo record from what is compiled
// in and what the machine answers now. registry.cpp lists them in order.
//
// To add a backend:
//   1. write src/backends/<name>/<name>_probe.cpp defining probe_<name>() (a
//      folder named after an optional library is compiled only when CMake
//      finds it: Note [Source layout and globbing] in CMakeLists.txt);
//   2. declare it below;
//   3. add a row to kBackends in registry.cpp, calling the probe under the
//      build's BP_HAVE_<NAME> and not_built(...) otherwise.

#include <string>

#include "backplane/backends/registry.h"

namespace bp::backends::detail {

BackendInfo probe_cpu();
BackendInfo probe_openmp();
BackendInfo probe_openblas();  // only with BP_HAVE_OPENBLAS
BackendInfo probe_onednn();    // only with BP_HAVE_ONEDNN
BackendInfo probe_fftw();      // only with BP_HAVE_FFTW
BackendInfo probe_cuda();
// cublas, cublaslt, cudnn, cufft, cusolver, cusparselt, nccl: a library
// linked into backplane_cuda, its version read through BpCudaApi.
BackendInfo probe_cuda_library(const std::string& name, bool built);

// A record for a backend this build does not contain.
BackendInfo not_built(const std::string& name, const std::string& why);
// "not built: <why>".
std::string not_built_reason(const std::string& why);
// "not available: <why>".
std::string not_available_reason(const std::string& why);

// "9.19.0" from 91900: the major*10000 + minor*100 + patch encoding.
std::string decode_version(long v);

}  // namespace bp::backends::detail
