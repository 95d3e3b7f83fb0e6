#pragma once
// The checks of the CUDA conv implementations (cudnn:conv, native:depthwise,
// ref:cuda), in libbackplane and SDK-free so they are unit-tested without a
// GPU; the implementations live in backplane_cuda (src/cuda/conv_*).
//
// Note [Depthwise kernel on CUDA]
// PyTorch sends a depthwise convolution (groups == C > 1, K a multiple of C,
// 2-D, forward) to cuDNN or to its own "native" depthwise kernel, and
// cudnn.depthwise_kernel (PyTorch 2.15) chooses: "cudnn" always cuDNN,
// "native" always the native kernel, "auto" PyTorch's use_cudnn_depthwise:
// cuDNN when the input is channels-last, else only for float16 on SM >= 7.0
// with cuDNN >= 8.2, no dilation, square strides of 1 or 2, square 1/3/5
// kernels, at least 32 channels and a workload where cuDNN's depthwise
// kernels win (depthwise_workload_prefers_cudnn, a condensed form of
// PyTorch's check_cudnn_depthwise_workload). With cuDNN disabled the native
// kernel runs whatever the setting says.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backplane/dispatch.h"
#include "ops/common/cuda_slot.h"
#include "ops/conv/params.h"

namespace bp::ops::conv::cuda_checks {

using dispatch::Reasons;

using CudaConvEnv = CudaDeviceEnv;  // ops/common/cuda_slot.h
// The environment of p's device, from the loaded backplane_cuda (zeros when
// CUDA or the device is not available).
CudaConvEnv cuda_env_of(const Params& p);

// PyTorch's ConvParams::is_depthwise (the device aside).
bool is_depthwise(const Params& p);
// The workload part of PyTorch's heuristic, for a depthwise fp16 problem.
bool depthwise_workload_prefers_cudnn(const Params& p);
// Whether cuDNN takes a depthwise problem under `setting` (Note [Depthwise
// kernel on CUDA]); cudnn.enabled is checked apart.
bool cudnn_takes_depthwise(const Params& p, flags::DepthwiseKernel setting, const CudaConvEnv& env);

// The cudnn:conv list (enabled, dtype, depthwise_kernel), bound to cuda_env_of(p).
std::vector<dispatch::Check<Params>> cudnn_checks();
// The flags cudnn:conv's run reads: benchmark and its limit, deterministic
// (and use_deterministic_algorithms), the fp32 precision of (cuda, conv).
std::vector<flags::Id> cudnn_run_flags();
// The native:depthwise list (depthwise problems; depthwise_kernel).
std::vector<dispatch::Check<Params>> depthwise_checks();

// The workspace cudnn:conv's chosen plan takes for a problem (by
// Problem::str()), recorded by backplane_cuda when it builds the plan, for
// explain's notes.
void record_cudnn_workspace(const std::string& problem, int64_t bytes, const std::string& plan);
std::optional<std::pair<int64_t, std::string>> cudnn_workspace(const std::string& problem);

}  // namespace bp::ops::conv::cuda_checks
