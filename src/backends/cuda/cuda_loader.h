#pragma once
// Finds and loads libbackplane_cuda.so (Note [Loading backplane_cuda] in
// core/cuda_api.h). Thread-safe; tried once per process.

#include <string>

#include "core/cuda_api.h"

namespace bp::cuda {

// Whether this build produced backplane_cuda at all.
bool is_built();
// The loaded table, or nullptr when the library or its CUDA dependencies
// cannot be loaded (load_error() says why).
const BpCudaApi* api();
const std::string& load_error();
// The path tried (BACKPLANE_CUDA_LIBRARY, else beside libbackplane).
const std::string& library_path();

}  // namespace bp::cuda
