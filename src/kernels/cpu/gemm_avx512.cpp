// GemmIsa::avx512: fp32 and f64 with the 8 x 48 (fp32) / 8 x 24 (f64)
// AVX-512 register tile of gemm_avx512_tile.h; bf16 and f16 inputs are
// widened to fp32 while packing (F16C for f16).

#include <immintrin.h>

#include "kernels/cpu/gemm_pack.h"
#include "kernels/cpu/gemm_avx512_tile.h"

namespace bp::kernels::cpu::detail {
namespace {

struct CvtF16ToF32Hw {
  float operator()(uint16_t x) const { return _cvtsh_ss(x); }
};

// Tile: 8 rows x 3 vectors (24 accumulators, 3 B loads + 8 broadcasts per 24
// FMAs). Measured against 14 x 32, 12 x 32 and 6 x 64 on the reference Zen 5
// (n = 1024, 2048, same run as dnnl_sgemm): all within noise of each other,
// 8 x 48 the most consistent, and it has the fewest loads per FMA.
// Blocking (fp32):
// - KC = 256: a B strip (256 x 48 fp32 = 48 KiB) is swept for every A strip
//   of the block (L1/L2); larger KC amortises the C write-back (once per KC
//   steps); 192 and 384 measured no better.
// - MC = 336 (42 x 8): the packed A block, 336 x 256 x 4 = 336 KiB, stays in
//   the 1 MiB L2 with room for the B strips streaming through; 168 and 504
//   measured no better. The driver evens the blocks out (and rounds their
//   count to a multiple of the thread count).
// - NC = 4096: the packed B block (256 x 4096 x 4 = 4 MiB) stays in L3 (32
//   MiB, shared by the two cores); most matrices need one jc pass; 1024 was
//   slower.
constexpr int kMR = 8, kNR = 48;
template <class Src, class Cvt>
constexpr GemmKernel<float> f32_kernel{kMR, kNR, 1, 4, 336, 256, 4096,
                                       &pack_lines<kMR, Src, float, Cvt>, &pack_lines<kNR, Src, float, Cvt>,
                                       &micro_tile<float, kMR, kNR / 16, FmaStep<float>>, &gemv_plain<Src, float, Cvt>};
// f64: same tile in registers (24 doubles = 3 vectors), twice the bytes per
// element, so the byte budgets above give MC = 168 and NC = 2048.
constexpr int kNR64 = 24;
constexpr GemmKernel<double> f64_kernel{kMR, kNR64, 1, 8, 168, 256, 2048,
                                        &pack_lines<kMR, double, double, CvtSame>,
                                        &pack_lines<kNR64, double, double, CvtSame>,
                                        &micro_tile<double, kMR, kNR64 / 8, FmaStep<double>>,
                                        &gemv_plain<double, double, CvtSame>};

}  // namespace

const GemmKernel<float>* gemm_kernel_f32_avx512(GemmSrc src) {
  switch (src) {
    case GemmSrc::f32: return &f32_kernel<float, CvtSame>;
    case GemmSrc::bf16: return &f32_kernel<uint16_t, CvtBf16ToF32>;
    case GemmSrc::f16: return &f32_kernel<uint16_t, CvtF16ToF32Hw>;
    case GemmSrc::f64: return nullptr;
  }
  return nullptr;
}
const GemmKernel<double>* gemm_kernel_f64_avx512() { return &f64_kernel; }

}  // namespace bp::kernels::cpu::detail
