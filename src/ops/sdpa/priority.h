#pragma once
// The CUDA order of the sdpa implementations: cuda.sdp_priority_order
// (SDPBackend numbers, spec §4.10.1), and its one-time switch to cuDNN
// first on GPUs where PyTorch prefers cuDNN. CPU problems keep the list's
// fixed order (flash:cpu, efficient:cpu, math:any), as PyTorch's CPU
// chooser ignores the priority order.

#include <string>

#include "backplane/dispatch.h"
#include "ops/sdpa/checks_cuda.h"
#include "ops/sdpa/params.h"

namespace bp::ops::sdpa {

// SDPBackend number of an implementation library: math 0, flash 1,
// efficient 2, cudnn 3, anything else 4 (overrideable).
int sdp_backend_of(std::string_view library);

// OpConfig::rank of the sdpa op: the library's position in
// cuda.sdp_priority_order for CUDA problems, 0 on the CPU.
int priority_rank(const dispatch::Implementation& impl, const dispatch::Problem& p);

// "cudnn, flash, efficient, math, overrideable" for the current order.
std::string priority_text();

// Whether PyTorch's rule prefers cuDNN attention here (spec §4.10.1):
// TORCH_CUDNN_SDPA_DEPRIORITIZED is not "1", the run-time cuDNN is newer
// than 9.15.0, and the device is SM 9.x or 10.x (SM x.0 / x.3 when the CUDA
// runtime is older than 13).
bool prefers_cudnn(const cuda_checks::CudaSdpaEnv& env, int cuda_runtime_version, const char* deprioritized_env);

// On the first CUDA sdpa call of the process: when the rule holds and
// cuda.sdp_priority_order was never set (no API call, no env var, no
// scope), the order becomes [cudnn, flash, efficient, math, overrideable].
void prefer_cudnn_once(const Params& p);

}  // namespace bp::ops::sdpa
