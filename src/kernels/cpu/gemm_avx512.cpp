// GemmIsa::avx512: fp32 and f64 with the 8 x 48 (fp32) / 8 x 24 (f64)
// AVX-512 register tile of gemm_avx512_tile.h; bf16 and f16 inputs are
// widened to fp32 while packing (F16C for f16).

#include <immintrin.h>

#include "kernels/cpu/gcc12_avx512_warnings.h"

#include "kernels/cpu/gemm_pack.h"
#include "kernels/cpu/gemm_avx512_direct.h"
#include "kernels/cpu/gemm_avx512_tile.h"
#include "kernels/cpu/round16_avx512.h"

namespace bp::kernels::cpu::detail {
namespace {

struct CvtF16ToF32Hw {
  float operator()(uint16_t x) const { return _cvtsh_ss(x); }
};

// Packs fp32 lines stored contiguously (ks == 1) into W-wide strips (W a
// multiple of 8): the rows of a row-major A (W = MR), and the columns of a
// transposed B (W = NR: `x @ w.T`, every linear layer). Both need a
// transpose: 8 x 8 blocks in registers instead of the scalar gather of
// pack_lines (A: 4.6% of a 2048^3 GEMM, several times more at 256; B:
// linear 16 x 4096 x 4096 ran at 0.38x oneDNN, packing B line by line with
// each value stored 192 bytes from the last). Eight lines at a time, all of
// k, so the lines read stay within an L1 set's ways even when they are 8 KiB
// apart. Everything else (ragged strips, the k tail, other strides) goes to
// pack_lines.
template <int W>
void pack_contiguous_lines_f32(const void* src_v, int64_t ls, int64_t ks, int64_t lines, int64_t k, void* dst_v) {
  static_assert(W % 8 == 0, "whole 8 x 8 blocks");
  const float* src = static_cast<const float*>(src_v);
  float* dst = static_cast<float*>(dst_v);
  if (ks != 1 || ls == 1) {
    pack_lines<W, float, float, CvtSame>(src, ls, ks, lines, k, dst);
    return;
  }
  const int64_t full = lines / W * W, k8 = k / 8 * 8;
  for (int64_t l0 = 0; l0 < full; l0 += W) {
    const float* s = src + l0 * ls;
    float* d = dst + l0 * k;
    for (int g = 0; g < W; g += 8)
      for (int64_t p = 0; p < k8; p += 8) {
        __m256 r[8];
        for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + (g + i) * ls + p);
        transpose8x8(r);
        for (int j = 0; j < 8; ++j) _mm256_storeu_ps(d + (p + j) * W + g, r[j]);
      }
    for (int64_t p = k8; p < k; ++p)
      for (int i = 0; i < W; ++i) d[p * W + i] = s[i * ls + p];
  }
  if (full < lines) pack_lines<W, float, float, CvtSame>(src + full * ls, ls, ks, lines - full, k, dst + full * k);
}

// fp32 for FewRowsTile (gemm_avx512_tile.h): one FMA per 16 k steps. (The
// portable loop nest GCC vectorised ran 4 x 4096 x 4096 at 0.65x oneDNN.)
struct FewRowsF32Dot {
  using T = float;
  static constexpr int64_t kK = 16;
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 load_tail(int64_t left, const float* p) { return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << left) - 1), p); }
  static __m512 dot(__m512 acc, __m512 a, __m512 b) { return _mm512_fmadd_ps(a, b, acc); }
};

// Tile: 8 rows x 3 vectors (24 accumulators, 3 B loads + 8 broadcasts per 24
// FMAs). Measured against 14 x 32, 12 x 32 and 6 x 64 on the reference Zen 5
// (n = 1024, 2048, same run as dnnl_sgemm): all within noise of each other,
// 8 x 48 the most consistent, and it has the fewest loads per FMA.
// Blocking (fp32):
// - KC = 384: a B strip (384 x 48 fp32 = 72 KiB) is swept for every A strip
//   of the block (L2, with the L1 prefetches of the micro-kernel); a larger
//   KC amortises the C write-back (once per KC steps) and the per-block
//   costs. Once A packing was vectorised, 384 measured 0.97-1.00x dnnl_sgemm
//   at n = 1024/2048 against 0.92-0.94x for 256; 192 (B strip within the
//   48 KiB L1) was clearly worse (0.76-0.93x), so keeping B in L1 is not
//   what matters here.
// - MC = 336 (42 x 8): the packed A block, 336 x 384 x 4 = 504 KiB, stays in
//   the 1 MiB L2 with room for the B strips streaming through; 168 and 504
//   measured no better (at KC = 256). The driver evens the blocks out (and rounds their
//   count to a multiple of the thread count).
// - NC = 4096: the packed B block (256 x 4096 x 4 = 4 MiB) stays in L3 (32
//   MiB, shared by the two cores); most matrices need one jc pass; 1024 was
//   slower.
constexpr int kMR = 8, kNR = 48;
// Only fp32 sources get the direct (unpacked B) kernel: bf16 and f16 B must
// be widened, which packing does once per element.
// 16-bit sources also round their output in the micro-kernel (Out16).
// fp32 sources also read row-major A in place (RowsA) where the driver
// finds that cheaper than packing it (Note [GEMM direct A] in gemm.cpp).
template <class Src, class Cvt, PackFn PackA = &pack_lines<kMR, Src, float, Cvt>,
          DirectKernelFn<float> Direct = nullptr, MicroOut16Fn Out16 = nullptr, RowsAKernelFn<float> RowsA = nullptr,
          PackFn PackB = &pack_lines<kNR, Src, float, Cvt>, FewRowsFn<float> FewRows = nullptr>
constexpr GemmKernel<float> f32_kernel{kMR, kNR, 1, 4, 336, 384, 4096,
                                       PackA, PackB,
                                       &micro_tile<float, kMR, kNR / 16, FmaStep<float>>, &gemv_plain<Src, float, Cvt>,
                                       Direct, Out16, nullptr, RowsA, FewRows};
template <class Cvt, class Round>
constexpr const GemmKernel<float>* half_kernel =
    &f32_kernel<uint16_t, Cvt, &pack_lines<kMR, uint16_t, float, Cvt>, nullptr,
                &micro_tile_out16<kMR, kNR / 16, FmaStep<float>, Round>>;
// f64: same tile in registers (24 doubles = 3 vectors), twice the bytes per
// element, so the byte budgets above give MC = 168 and NC = 2048.
constexpr int kNR64 = 24;
constexpr GemmKernel<double> f64_kernel{kMR, kNR64, 1, 8, 168, 256, 2048,
                                        &pack_lines<kMR, double, double, CvtSame>,
                                        &pack_lines<kNR64, double, double, CvtSame>,
                                        &micro_tile<double, kMR, kNR64 / 8, FmaStep<double>>,
                                        &gemv_plain<double, double, CvtSame>};

}  // namespace

const GemmKernel<float>* gemm_kernel_f32_avx512(DType src) {
  switch (src) {
    case DType::f32:
      return &f32_kernel<float, CvtSame, &pack_contiguous_lines_f32<kMR>,
                         &direct_tile<float, kMR, kNR / 16, FmaDirect<float>>, nullptr,
                         &rows_a_tile<float, kMR, kNR / 16, FmaStep<float>, FmaDirect<float>, void>,
                         &pack_contiguous_lines_f32<kNR>, &few_rows_by_tiles<float, FewRowsTile<FewRowsF32Dot>>>;
    case DType::bf16: return half_kernel<CvtBf16ToF32, RoundToBf16>;
    case DType::f16: return half_kernel<CvtF16ToF32Hw, RoundToF16>;
    default: return nullptr;  // f64 has its own kernel; the other types none
  }
  return nullptr;
}
const GemmKernel<double>* gemm_kernel_f64_avx512() { return &f64_kernel; }

}  // namespace bp::kernels::cpu::detail
