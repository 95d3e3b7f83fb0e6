// GemmIsa::avx2 (AVX2 + FMA + F16C): a 6 x 16 fp32 (6 x 8 f64) register tile,
// the classic Haswell-to-Zen shape: 12 accumulators + 2 B vectors + 1
// broadcast = 15 of the 16 ymm registers, 12 FMAs per 2 loads + 6 broadcasts.

#include <immintrin.h>

#include "kernels/cpu/gemm_pack.h"

namespace bp::kernels::cpu::detail {
namespace {

template <class Acc>
struct Ymm;
template <>
struct Ymm<float> {
  using R = __m256;
  static constexpr int L = 8;
  static R zero() { return _mm256_setzero_ps(); }
  static R load(const float* p) { return _mm256_load_ps(p); }
  static R loadu(const float* p) { return _mm256_loadu_ps(p); }
  static R set1(float x) { return _mm256_set1_ps(x); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, R v) { _mm256_store_ps(p, v); }
  static void storeu(float* p, R v) { _mm256_storeu_ps(p, v); }
};
template <>
struct Ymm<double> {
  using R = __m256d;
  static constexpr int L = 4;
  static R zero() { return _mm256_setzero_pd(); }
  static R load(const double* p) { return _mm256_load_pd(p); }
  static R loadu(const double* p) { return _mm256_loadu_pd(p); }
  static R set1(double x) { return _mm256_set1_pd(x); }
  static R mul(R a, R b) { return _mm256_mul_pd(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_pd(a, b, c); }
  static void store(double* p, R v) { _mm256_store_pd(p, v); }
  static void storeu(double* p, R v) { _mm256_storeu_pd(p, v); }
};

template <class Acc, int MR>
void micro_avx2(int64_t k, const void* a_v, const void* b_v, Acc* c, int64_t rs_c, int64_t cs_c, int m, int n,
                Acc alpha, Acc beta) {
  using V = Ymm<Acc>;
  using R = typename V::R;
  constexpr int L = V::L;
  const Acc* a = static_cast<const Acc*>(a_v);
  const Acc* b = static_cast<const Acc*>(b_v);
  R acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = V::zero();
  for (int64_t p = 0; p < k; ++p, a += MR, b += 2 * L) {
    const R b0 = V::load(b), b1 = V::load(b + L);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const R ai = V::set1(a[i]);
      acc[i][0] = V::fma(ai, b0, acc[i][0]);
      acc[i][1] = V::fma(ai, b1, acc[i][1]);
    }
  }
  // The write-back is once per KC steps. A whole tile of row-major C (the
  // common case) goes straight from the registers: through the scalar
  // buffer below it cost about a tenth of a 1024^3 product.
  if (m == MR && n == 2 * L && cs_c == 1) {
    const R va = V::set1(alpha);
    if (beta == Acc(0)) {
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        V::storeu(c + i * rs_c, V::mul(va, acc[i][0]));
        V::storeu(c + i * rs_c + L, V::mul(va, acc[i][1]));
      }
    } else {
      const R vb = V::set1(beta);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        Acc* ci = c + i * rs_c;
        V::storeu(ci, V::fma(va, acc[i][0], V::mul(vb, V::loadu(ci))));
        V::storeu(ci + L, V::fma(va, acc[i][1], V::mul(vb, V::loadu(ci + L))));
      }
    }
    return;
  }
  // Edge tiles and strided C: through a buffer, scalar.
  alignas(32) Acc tile[MR][2 * L];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    V::store(&tile[i][0], acc[i][0]);
    V::store(&tile[i][L], acc[i][1]);
  }
  store_tile<Acc>(&tile[0][0], 2 * L, c, rs_c, cs_c, m, n, alpha, beta);
}

struct CvtF16ToF32Hw {
  float operator()(uint16_t x) const { return _cvtsh_ss(x); }
};

// Blocking: KC = 256 keeps a B strip (256 x 16 fp32 = 16 KiB) in a 32 KiB
// L1; MC = 144 (24 x 6) gives a 144 KiB A block, inside the 256 KiB-1 MiB L2
// of AVX2-era cores; NC = 4096 (a 4 MiB B block) for L3.
constexpr int kMR = 6, kNR = 16, kNR64 = 8;
template <class Src, class Cvt>
constexpr GemmKernel<float> f32_kernel{kMR, kNR, 1, 4, 144, 256, 4096,
                                       &pack_lines<kMR, Src, float, Cvt>, &pack_lines<kNR, Src, float, Cvt>,
                                       &micro_avx2<float, kMR>, &gemv_plain<Src, float, Cvt>};
constexpr GemmKernel<double> f64_kernel{kMR, kNR64, 1, 8, 72, 256, 2048,
                                        &pack_lines<kMR, double, double, CvtSame>,
                                        &pack_lines<kNR64, double, double, CvtSame>, &micro_avx2<double, kMR>,
                                        &gemv_plain<double, double, CvtSame>};

}  // namespace

const GemmKernel<float>* gemm_kernel_f32_avx2(DType src) {
  switch (src) {
    case DType::f32: return &f32_kernel<float, CvtSame>;
    case DType::bf16: return &f32_kernel<uint16_t, CvtBf16ToF32>;
    case DType::f16: return &f32_kernel<uint16_t, CvtF16ToF32Hw>;
    default: return nullptr;  // f64 has its own kernel; the other types none
  }
  return nullptr;
}
const GemmKernel<double>* gemm_kernel_f64_avx2() { return &f64_kernel; }

}  // namespace bp::kernels::cpu::detail
