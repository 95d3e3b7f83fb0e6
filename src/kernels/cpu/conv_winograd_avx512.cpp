// Winograd F(4x4, 3x3) (conv_winograd_impl.h) with 16-lane vectors for the
// transforms and the avx512 GEMM kernels for the 36 products.

#include "kernels/cpu/conv_vec.h"
#include "kernels/cpu/conv_winograd_impl.h"

BP_WINOGRAD_VARIANT(avx512, Zmm, avx512)
