#pragma once
// The makers of the sparse implementations, listed in order in op.cpp.
//
// How to add a sparse implementation (docs/adding_an_op.md has the recipe):
//   1. write src/ops/sparse/sparse_<library>.cpp defining make_<library>()
//      over Params (Note [Sparse params]): checks from
//      backplane/dispatch_checks.h, a run that fills p.out (staging() and
//      finish() in params.h do the fp32 staging, bias and rounding);
//   2. declare the maker below and put it in op.cpp's list (a CUDA row is a
//      slot there, its checks in checks_cuda.cpp, its run in src/cuda/);
//   3. test it in tests/python/test_sparse.py, forced with
//      implementations("sparse", "<name>").

#include <memory>

#include "backplane/dispatch.h"

namespace bp::ops::sparse {

std::unique_ptr<dispatch::Implementation> make_sparse24_cpu();  // sparse_cpu.cpp
std::unique_ptr<dispatch::Implementation> make_sparse24_avx2();  // sparse_avx2_impl.cpp
std::unique_ptr<dispatch::Implementation> make_dense();         // sparse_dense.cpp
std::unique_ptr<dispatch::Implementation> make_ref();           // sparse_ref.cpp

}  // namespace bp::ops::sparse
