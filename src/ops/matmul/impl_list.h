#pragma once
// How to add a matmul implementation:
//   1. write src/ops/matmul/matmul_<library>.cpp defining make_<library>_...()
//      (a file named after an optional library, *_openblas.cpp / *_onednn.cpp,
//      is compiled only when CMake finds it: Note [Source layout and globbing]);
//   2. build it from small named checks (checks.h; add new ones there) and a
//      run function over for_each_gemm (params.h, Note [Matmul params]);
//   3. declare the maker below and put it in kImplList order in impl_list.cpp,
//      with dispatch::not_built(...) under #else for an optional library;
//   4. test it in tests/ops/ and tests/python/test_matmul.py (forced with
//      implementations("matmul", "<name>")).
// A library loaded later (backplane_cuda) adds its entries at load time
// instead: matmul_op().add(..., dispatch::Position::before_reference)
// (Note [Registering implementations later] in backplane/dispatch.h).

#include <memory>

#include "backplane/dispatch.h"
#include "kernels/cpu/gemm.h"

namespace bp::ops::matmul {

// The op "matmul" (also serving addmm and linear), its list built on first use.
dispatch::Op& matmul_op();

std::unique_ptr<dispatch::Implementation> make_builtin(kernels::cpu::GemmIsa isa);  // matmul_builtin.cpp
std::unique_ptr<dispatch::Implementation> make_openblas_gemm();                    // matmul_openblas.cpp
std::unique_ptr<dispatch::Implementation> make_onednn_matmul();                    // matmul_onednn.cpp
std::unique_ptr<dispatch::Implementation> make_ref();                              // matmul_ref.cpp

}  // namespace bp::ops::matmul
