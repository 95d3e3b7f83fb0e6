// The lane-wise small-matrix routines (linalg_lanes_impl.h) on the
// baseline's 16-byte vectors (4 float or 2 double matrices per group), and
// the choice of variant.

#include "kernels/cpu/linalg_lanes_impl.h"

namespace bp::kernels::cpu {
namespace detail {

int64_t lanes_run_f32_generic(const LanesBatch& batch) { return lanes_run<float, 16>(batch); }
int64_t lanes_run_f64_generic(const LanesBatch& batch) { return lanes_run<double, 16>(batch); }

}  // namespace detail

namespace {
// avx2 and the AVX-512 variants all run the 32-byte code (wider lanes would
// need groups of 16 matrices; the batches this serves gain little from it).
bool wide(GemmIsa isa) { return isa != GemmIsa::generic; }
}  // namespace

int lanes_width(GemmIsa isa, int element_bytes) { return (wide(isa) ? 32 : 16) / element_bytes; }

int64_t lanes_run_f32(GemmIsa isa, const LanesBatch& batch) {
  return wide(isa) ? detail::lanes_run_f32_avx2(batch) : detail::lanes_run_f32_generic(batch);
}

int64_t lanes_run_f64(GemmIsa isa, const LanesBatch& batch) {
  return wide(isa) ? detail::lanes_run_f64_avx2(batch) : detail::lanes_run_f64_generic(batch);
}

}  // namespace bp::kernels::cpu
