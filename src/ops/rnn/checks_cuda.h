#pragma once
// The checks of cudnn:rnn (the rnn op's CUDA slot): in libbackplane and
// SDK-free, so they are unit-tested and their flags known without a GPU;
// the run lives in backplane_cuda (src/cuda/rnn_cudnn.cpp).

#include <vector>

#include "backplane/dispatch.h"
#include "ops/rnn/params.h"

namespace bp::ops::rnn::cuda_checks {

std::vector<dispatch::Check<Params>> cudnn_checks();
// The flags cudnn:rnn's run reads: the cudnn.rnn fp32 precision path (math type).
std::vector<flags::Id> cudnn_run_flags();

}  // namespace bp::ops::rnn::cuda_checks
