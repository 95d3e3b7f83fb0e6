// packed:cpu's step kernels with AVX-512 (512-bit vectors; compiled with
// -mavx512f ... by the _avx512.cpp rule of CMakeLists.txt).

#include <immintrin.h>

#include "ops/rnn/cell_avx512_f32.h"
#include "ops/rnn/cell_kernel.h"

namespace bp::ops::rnn::cell {
namespace {

using avx512::F32;
struct F64 {
  using T = double;
  static constexpr int V = 8;
  typedef double vec __attribute__((vector_size(64)));
  typedef int64_t ivec __attribute__((vector_size(64)));
  static vec fma(vec a, vec b, vec c) { return (vec)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c); }
  static vec splat(T x) { return (vec)_mm512_set1_pd(x); }
  static constexpr int rows4 = 6, rows3 = 8, rows1 = 8;
};

}  // namespace

namespace detail {
int lanes_avx512(bool f64) { return f64 ? F64::V : F32::V; }
void pack_f32_avx512(const float* w, int g, int64_t u, int64_t k, float* p) { Kernel<F32>::pack(w, g, u, k, p); }
void pack_f64_avx512(const double* w, int g, int64_t u, int64_t k, double* p) { Kernel<F64>::pack(w, g, u, k, p); }
void step_f32_avx512(const StepArgs<float>& s) { Kernel<F32>::step(s); }
void step_f64_avx512(const StepArgs<double>& s) { Kernel<F64>::step(s); }
}  // namespace detail

}  // namespace bp::ops::rnn::cell
