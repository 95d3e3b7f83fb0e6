// Winograd F(4x4, 3x3) (conv_winograd_impl.h) with 8-lane vectors for the
// transforms and the avx2 GEMM kernels for the 36 products.

#include "kernels/cpu/conv_vec.h"
#include "kernels/cpu/conv_winograd_impl.h"

BP_WINOGRAD_VARIANT(avx2, Ymm, avx2)
