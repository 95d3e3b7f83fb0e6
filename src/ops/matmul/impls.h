#pragma once
// The makers of the matmul implementations that live in this folder, listed
// in order in op.cpp (its one ordered list; CUDA rows are slots there).
//
// How to add a matmul implementation (docs/adding_an_op.md has the whole recipe):
//   1. write src/ops/matmul/matmul_<library>.cpp defining make_<library>_...()
//      (a file named after an optional library, *_openblas.cpp / *_onednn.cpp,
//      is compiled only when CMake finds it: Note [Source layout and globbing]);
//   2. build its checks from the blocks of backplane/dispatch_checks.h and
//      checks.h, and its run function over for_each_gemm (Note [Matmul params]);
//   3. declare the maker below and put it in op.cpp's list, with
//      dispatch::not_built(...) under #else for an optional library;
//   4. test it in tests/ops/ and tests/python/test_matmul.py (forced with
//      implementations("matmul", "<name>")).

#include <memory>

#include "backplane/dispatch.h"
#include "kernels/cpu/gemm.h"

namespace bp::ops::matmul {

std::unique_ptr<dispatch::Implementation> make_builtin(kernels::cpu::GemmIsa isa);  // matmul_builtin.cpp
std::unique_ptr<dispatch::Implementation> make_openblas_gemm();                    // matmul_openblas.cpp
std::unique_ptr<dispatch::Implementation> make_onednn_matmul();                    // matmul_onednn.cpp
std::unique_ptr<dispatch::Implementation> make_ref();                              // matmul_ref.cpp
// The CUDA rows, declared here and filled by backplane_cuda (checks_cuda.cpp).
std::unique_ptr<dispatch::Implementation> make_cuda_slot(const char* name, const char* backend, bool lt);

// The op (after ops::ensure_ops()).
dispatch::Op& matmul_op();

}  // namespace bp::ops::matmul
