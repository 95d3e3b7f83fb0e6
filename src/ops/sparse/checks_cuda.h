#pragma once
// The checks of cusparselt:spmma (the sparse op's CUDA slot): in
// libbackplane and SDK-free, so they are unit-tested and their flags known
// without a GPU; the run belongs in backplane_cuda (src/cuda/sparse_spmma.cpp),
// which adds the one check that needs the weight's values (float32's 1:2
// structure).

#include <vector>

#include "backplane/dispatch.h"
#include "ops/sparse/params.h"

namespace bp::ops::sparse::cuda_checks {

// cuSPARSELt's alignment of the structured matrix and its dense partner:
// rows, columns and leading dimensions multiples of this many elements.
int64_t alignment_of(DType d);  // 32 for int8, 16 for 16-bit floats, 8 for float32

std::vector<dispatch::Check<Params>> spmma_checks();

// The flags the run reads: cudnn.benchmark / benchmark_limit (its algorithm search).
std::vector<flags::Id> spmma_run_flags();

}  // namespace bp::ops::sparse::cuda_checks
