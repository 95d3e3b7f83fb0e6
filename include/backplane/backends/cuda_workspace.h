#pragma once
// cuBLAS / cuBLASLt workspace sizes as the GEMMs will use them (spec 4.6).
//
// The flag rows cuda.cublas_workspace_size / cuda.cublaslt_workspace_size hold
// what was asked for (API, env CUBLAS_WORKSPACE_CONFIG / CUBLASLT_WORKSPACE_SIZE,
// or the default). These functions add what depends on the machine: the
// cuBLAS default is 32 MiB on sm_90 (once a device is seen), and with the
// unified workspace (TORCH_CUBLAS_WORKSPACE_CACHE=1, as in PyTorch 2.15;
// separate workspaces otherwise) cuBLASLt shares cuBLAS's buffer, so its
// size is capped at cuBLAS's (warning once).

#include <cstdint>

namespace bp::backends::cuda {

int64_t effective_cublas_workspace_size();
int64_t effective_cublaslt_workspace_size();
bool unified_workspace();

}  // namespace bp::backends::cuda
