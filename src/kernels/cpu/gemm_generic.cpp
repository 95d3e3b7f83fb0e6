// GemmIsa::generic: plain C++ (the compiler may auto-vectorise for the
// baseline ISA), the fallback on every CPU and the model the ISA files follow.

#include "kernels/cpu/gemm_pack.h"

namespace bp::kernels::cpu::detail {
namespace {

// The whole MR x NR tile lives in a local array the compiler keeps in
// registers where it can; NR = 4 vectors of the SSE2 baseline.
template <class Acc, int MR, int NR>
void micro_generic(int64_t k, const void* a_v, const void* b_v, Acc* c, int64_t rs_c, int64_t cs_c, int m, int n,
                   Acc alpha, Acc beta) {
  const Acc* a = static_cast<const Acc*>(a_v);
  const Acc* b = static_cast<const Acc*>(b_v);
  Acc acc[MR][NR] = {};
  for (int64_t p = 0; p < k; ++p, a += MR, b += NR)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] += a[i] * b[j];
  store_tile<Acc>(&acc[0][0], NR, c, rs_c, cs_c, m, n, alpha, beta);
}

// Blocking: small tiles, so any cache works: MC x KC fp32 = 128 KiB (L2),
// KC x NC is streamed from L3/memory.
constexpr int kMR = 4, kNR = 16;
template <class Src, class Cvt>
constexpr GemmKernel<float> f32_kernel{kMR, kNR, 1, 4, 128, 256, 4096,
                                       &pack_lines<kMR, Src, float, Cvt>, &pack_lines<kNR, Src, float, Cvt>,
                                       &micro_generic<float, kMR, kNR>, &gemv_plain<Src, float, Cvt>};
constexpr int kMR64 = 4, kNR64 = 8;
constexpr GemmKernel<double> f64_kernel{kMR64, kNR64, 1, 8, 128, 256, 4096,
                                        &pack_lines<kMR64, double, double, CvtSame>,
                                        &pack_lines<kNR64, double, double, CvtSame>,
                                        &micro_generic<double, kMR64, kNR64>, &gemv_plain<double, double, CvtSame>};

}  // namespace

const GemmKernel<float>* gemm_kernel_f32_generic(DType src) {
  switch (src) {
    case DType::f32: return &f32_kernel<float, CvtSame>;
    case DType::bf16: return &f32_kernel<uint16_t, CvtBf16ToF32>;
    case DType::f16: return &f32_kernel<uint16_t, CvtF16ToF32Soft>;
    case DType::f64: return nullptr;
  }
  return nullptr;
}
const GemmKernel<double>* gemm_kernel_f64_generic() { return &f64_kernel; }

}  // namespace bp::kernels::cpu::detail
