#pragma once
// The checks of the CUDA sdpa implementations (math:cuda, cudnn:sdpa), in
// libbackplane and SDK-free so they are unit-tested without a GPU; the
// implementations themselves live in backplane_cuda (src/cuda/sdpa_*).
//
// The cudnn:sdpa list follows PyTorch's can_use_cudnn_attention (spec
// §4.10.7) in order. Checks that depend on the device and the cuDNN
// library take a CudaSdpaEnv, so tests can ask "what would an SM 9.0 with
// cuDNN 9.19 say"; the implementation passes cuda_env_of(p). Determinism is
// not a check here: cudnn:sdpa is marked nondeterministic, and dispatch
// rejects it under use_deterministic_algorithms(True) (and keeps it, with a
// warning, under warn_only), as PyTorch's check_cudnn_deterministic does.

#include <vector>

#include "backplane/dispatch.h"
#include "ops/common/cuda_slot.h"
#include "ops/sdpa/params.h"

namespace bp::ops::sdpa::cuda_checks {

using dispatch::Reasons;

using CudaSdpaEnv = CudaDeviceEnv;  // ops/common/cuda_slot.h
// The environment of p's device, from the loaded backplane_cuda (zeros when
// CUDA or the device is not available).
CudaSdpaEnv cuda_env_of(const Params& p);

// math:cuda's kernels take views of at most this many dims (batch dims + 2).
inline constexpr int kMathCudaMaxViewDims = 12;
bool math_cuda_view_dims(const Params& p, Reasons& r);  // "dims": at most kMathCudaMaxViewDims - 2 batch dims

// cudnn:sdpa, with an explicit environment.
bool cudnn_version(const Params& p, const CudaSdpaEnv& env, Reasons& r);   // "cudnn_version": >= 9.0, dropout not on 9.11-9.13
bool cudnn_dtype(const Params& p, const CudaSdpaEnv& env, Reasons& r);     // "dtype": fp16/bf16 (SM >= 8), fp16 below
bool cudnn_hardware(const Params& p, const CudaSdpaEnv& env, Reasons& r);  // "hardware": SM 8.0 .. 12.1
bool cudnn_dropout(const Params& p, Reasons& r);                           // "dropout": a multiple of 1/16
bool cudnn_sizes(const Params& p, Reasons& r);                             // "sizes": batch and heads <= 65535
bool cudnn_head_dims(const Params& p, const CudaSdpaEnv& env, Reasons& r);  // "head_dim": limit and multiple of 8
bool cudnn_seq_lens(const Params& p, Reasons& r);                          // "seq_len": S != 1; L != 1 with dropout
bool dense_strides(const Params& p, Reasons& r);                           // "strides": no zero stride on a dim > 1

// The head-size limit of cuDNN attention for an environment (128, or 256
// on SM 9.x/10.x with cuDNN > 9.22).
int cudnn_max_head_dim(const CudaSdpaEnv& env);

// The whole cudnn:sdpa list in PyTorch's order (the device check, which
// PyTorch makes third, is dispatch's own), bound to cuda_env_of(p).
std::vector<dispatch::Check<Params>> cudnn_checks();
// The math:cuda list.
std::vector<dispatch::Check<Params>> math_cuda_checks();

}  // namespace bp::ops::sdpa::cuda_checks
