#pragma once
// Everything public in one include. Each header is self-contained; include
// only what you use if compile time matters.

#include "backplane/build_info.h"
#include "backplane/device.h"
#include "backplane/dtype.h"
#include "backplane/error.h"
#include "backplane/flags.h"
#include "backplane/log.h"
#include "backplane/plan_cache.h"
#include "backplane/precision.h"
#include "backplane/runtime.h"
#include "backplane/tensor.h"
#include "backplane/version.h"

#include "backplane/backends/cpu.h"
#include "backplane/backends/cuda.h"
#include "backplane/backends/cuda_workspace.h"
#include "backplane/backends/cudnn.h"
#include "backplane/backends/cufft_plan_cache.h"
#include "backplane/backends/cusparselt.h"
#include "backplane/backends/kleidiai.h"
#include "backplane/backends/mkl.h"
#include "backplane/backends/mps.h"
#include "backplane/backends/nnpack.h"
#include "backplane/backends/onednn.h"
#include "backplane/backends/openmp.h"
#include "backplane/backends/registry.h"
