#pragma once
// The makers of the conv implementations, listed in order in op.cpp (its
// one ordered list; CUDA rows are slots there).
//
// How to add a conv implementation (docs/adding_an_op.md has the whole recipe):
//   1. write src/ops/conv/conv_<library>.cpp defining make_<library>_...()
//      (a file named after an optional library, *_onednn.cpp, is compiled
//      only when CMake finds it: Note [Source layout and globbing]);
//   2. build its checks from the blocks of backplane/dispatch_checks.h and
//      checks.h; its run reads Params (Note [Conv params]) and writes out;
//   3. declare the maker below and put it in op.cpp's list, with
//      dispatch::not_built(...) under #else for an optional library;
//   4. test it in tests/python/test_conv.py (every implementation is forced
//      with implementations("conv", "<name>") against the NumPy oracle).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backplane/dispatch.h"
#include "kernels/cpu/conv_direct.h"
#include "ops/conv/params.h"


namespace bp::ops::conv {

std::unique_ptr<dispatch::Implementation> make_onednn_conv();                       // conv_onednn.cpp

std::unique_ptr<dispatch::Implementation> make_winograd();                          // conv_winograd.cpp
std::vector<std::string> winograd_notes(const Params& p);  // explain: the weight cache's state (conv_winograd.cpp)
std::unique_ptr<dispatch::Implementation> make_direct(kernels::cpu::ConvIsa isa);  // conv_direct.cpp
std::unique_ptr<dispatch::Implementation> make_im2col();                            // conv_im2col.cpp
std::unique_ptr<dispatch::Implementation> make_ref();                               // conv_ref.cpp
// The CUDA rows, declared here and filled by backplane_cuda (checks_cuda.cpp).
std::unique_ptr<dispatch::Implementation> make_cudnn_slot();
std::unique_ptr<dispatch::Implementation> make_depthwise_cuda_slot();
std::unique_ptr<dispatch::Implementation> make_ref_cuda_slot();

// The kernels' view of a problem (params.cpp), and the staging of the
// kernels that read and write channels-last fp32: x, w and bias as dense
// fp32 copies where they are not, out computed in place when it is dense
// channels-last fp32, else in a buffer rounded into it.
kernels::cpu::ConvShape kernel_shape(const Params& p);
// The kernel gets the shape it computes: the problem's, or with image_chunks
// (Note [Staging by images] in params.cpp) a few of its images at a time.
using ChannelsLastKernel = std::function<void(const kernels::cpu::ConvShape& shape, const float* x, const float* w,
                                              const float* bias, float* out)>;
// isa: the implementation's, which the staging copies use too (layout.h).
void run_channels_last_f32(const Params& p, kernels::cpu::ConvIsa isa, const ChannelsLastKernel& kernel,
                           bool image_chunks = false);

// The op (after ops::ensure_ops()).
dispatch::Op& conv_op();

}  // namespace bp::ops::conv
