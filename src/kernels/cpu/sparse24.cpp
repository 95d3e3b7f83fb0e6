// Which 2:4 kernels this CPU runs (sparse24.h): the GEMM's answer for the
// same instruction sets.

#include "kernels/cpu/sparse24.h"

#include "kernels/cpu/gemm.h"

namespace bp::kernels::cpu {

bool sparse24_supported(bool bf16) { return gemm_isa_supported(bf16 ? GemmIsa::avx512_bf16 : GemmIsa::avx512); }

bool sparse24_avx2_supported() { return gemm_isa_supported(GemmIsa::avx2); }

}  // namespace bp::kernels::cpu
