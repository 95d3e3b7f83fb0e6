// packed:cpu's step kernels without ISA flags (SSE2's 128-bit vectors on
// x86-64), and the per-ISA dispatch of cell_step.h.

#include "backplane/backends/cpu.h"
#include "backplane/error.h"
#include "kernels/cpu/gemm.h"
#include "ops/rnn/cell_kernel.h"

namespace bp::ops::rnn::cell {
namespace {

struct F32 {
  using T = float;
  static constexpr int V = 4;
  typedef float vec __attribute__((vector_size(16)));
  typedef int32_t ivec __attribute__((vector_size(16)));
  static vec fma(vec a, vec b, vec c) { return a * b + c; }
  static vec splat(T x) { return vec{x, x, x, x}; }
  static constexpr int rows4 = 3, rows3 = 4, rows1 = 8;
};
struct F64 {
  using T = double;
  static constexpr int V = 2;
  typedef double vec __attribute__((vector_size(16)));
  typedef int64_t ivec __attribute__((vector_size(16)));
  static vec fma(vec a, vec b, vec c) { return a * b + c; }
  static vec splat(T x) { return vec{x, x}; }
  static constexpr int rows4 = 3, rows3 = 4, rows1 = 8;
};

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "avx512";
    case Isa::avx2: return "avx2";
    default: return "generic";
  }
}

Isa pick_isa() {
  using backends::cpu::CpuCapability;
  using kernels::cpu::GemmIsa;
  const int cap = static_cast<int>(backends::cpu::cpu_capability());
  if (cap >= static_cast<int>(CpuCapability::Avx512) && kernels::cpu::gemm_isa_supported(GemmIsa::avx512))
    return Isa::avx512;
  if (cap >= static_cast<int>(CpuCapability::Avx2) && kernels::cpu::gemm_isa_supported(GemmIsa::avx2))
    return Isa::avx2;
  return Isa::generic;
}

namespace detail {
int lanes_generic(bool f64) { return f64 ? F64::V : F32::V; }
}  // namespace detail

int lanes(Isa isa, bool f64) {
  switch (isa) {
    case Isa::avx512: return detail::lanes_avx512(f64);
    case Isa::avx2: return detail::lanes_avx2(f64);
    default: return detail::lanes_generic(f64);
  }
}

void pack_f32(Isa isa, const float* w, int gates, int64_t units, int64_t K, float* panel) {
  switch (isa) {
    case Isa::avx512: return detail::pack_f32_avx512(w, gates, units, K, panel);
    case Isa::avx2: return detail::pack_f32_avx2(w, gates, units, K, panel);
    default: return Kernel<F32>::pack(w, gates, units, K, panel);
  }
}
void pack_f64(Isa isa, const double* w, int gates, int64_t units, int64_t K, double* panel) {
  switch (isa) {
    case Isa::avx512: return detail::pack_f64_avx512(w, gates, units, K, panel);
    case Isa::avx2: return detail::pack_f64_avx2(w, gates, units, K, panel);
    default: return Kernel<F64>::pack(w, gates, units, K, panel);
  }
}
void step_f32(Isa isa, const StepArgs<float>& s) {
  switch (isa) {
    case Isa::avx512: return detail::step_f32_avx512(s);
    case Isa::avx2: return detail::step_f32_avx2(s);
    default: return Kernel<F32>::step(s);
  }
}
void step_f64(Isa isa, const StepArgs<double>& s) {
  switch (isa) {
    case Isa::avx512: return detail::step_f64_avx512(s);
    case Isa::avx2: return detail::step_f64_avx2(s);
    default: return Kernel<F64>::step(s);
  }
}

}  // namespace bp::ops::rnn::cell
