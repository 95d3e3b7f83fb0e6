// packed:cpu's step kernels with AVX2 + FMA (256-bit vectors; compiled with
// -mavx2 -mfma by the _avx2.cpp rule of CMakeLists.txt).

#include <immintrin.h>

#include "ops/rnn/cell_kernel.h"

namespace bp::ops::rnn::cell {
namespace {

struct F32 {
  using T = float;
  static constexpr int V = 8;
  typedef float vec __attribute__((vector_size(32)));
  typedef int32_t ivec __attribute__((vector_size(32)));
  static vec fma(vec a, vec b, vec c) { return (vec)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c); }
  static vec splat(T x) { return (vec)_mm256_set1_ps(x); }
  static constexpr int rows4 = 3, rows3 = 4, rows1 = 8;  // 16 registers
};
struct F64 {
  using T = double;
  static constexpr int V = 4;
  typedef double vec __attribute__((vector_size(32)));
  typedef int64_t ivec __attribute__((vector_size(32)));
  static vec fma(vec a, vec b, vec c) { return (vec)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c); }
  static vec splat(T x) { return (vec)_mm256_set1_pd(x); }
  static constexpr int rows4 = 3, rows3 = 4, rows1 = 8;
};

}  // namespace

namespace detail {
int lanes_avx2(bool f64) { return f64 ? F64::V : F32::V; }
void pack_f32_avx2(const float* w, int g, int64_t u, int64_t k, float* p) { Kernel<F32>::pack(w, g, u, k, p); }
void pack_f64_avx2(const double* w, int g, int64_t u, int64_t k, double* p) { Kernel<F64>::pack(w, g, u, k, p); }
void step_f32_avx2(const StepArgs<float>& s) { Kernel<F32>::step(s); }
void step_f64_avx2(const StepArgs<double>& s) { Kernel<F64>::step(s); }
}  // namespace detail

}  // namespace bp::ops::rnn::cell
