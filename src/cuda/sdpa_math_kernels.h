#pragma once
// The device steps of math:cuda (sdpa_math_cuda.cpp), behind a plain
// interface so the .cu file needs none of the C++20 core headers:
//  - cast_strided: a strided tensor of one float type into a contiguous one
//    of another (what Tensor::to would do through the host);
//  - softmax_rows: scale, additive mask, causal limit, safe softmax and
//    dropout in place on contiguous [rows, S] scores, the CUDA twin of
//    math:any's softmax_rows (same Philox numbering, so one seed drops the
//    same scores on both devices).

#include <cstdint>

#include "backends/cuda/blas_gemm.h"  // GemmMatrix; DType (the four float element types it takes)

namespace bp::cuda_impl {

constexpr int kMaxViewDims = 12;

struct StridedView {
  void* data;
  DType type;
  int ndim;
  int64_t sizes[kMaxViewDims];
  int64_t strides[kMaxViewDims];  // in elements
};

// dst (contiguous, same element count and dim order as src) = src converted.
void cast_strided(int device, const StridedView& dst, const StridedView& src);

struct SoftmaxArgs {
  void* scores;        // contiguous [rows, S], f32 or f64 (f64 set)
  bool f64;
  int64_t rows, L, S;  // rows = batch * L; row r is query r % L of batch entry r / L
  double scale;
  bool causal;         // key j > query i is masked (top-left aligned)
  // Additive mask of the scores' type, or null. Entry (b, i, j) sits at
  // offset(b) + i * mask_rs + j * mask_cs, offset(b) from b's index in the
  // extended batch dims (ext_sizes) and mask_ext_strides.
  const void* mask;
  int64_t mask_rs, mask_cs;
  int ext_ndim;
  int64_t ext_sizes[kMaxViewDims];
  int64_t mask_ext_strides[kMaxViewDims];
  // Dropout: score n = r * S + j is dropped when the n-th number of the
  // Philox stream (seed, first_block) is below dropout_p.
  double dropout_p;
  uint64_t seed, first_block;
};

void softmax_rows(int device, const SoftmaxArgs& args);

}  // namespace bp::cuda_impl
