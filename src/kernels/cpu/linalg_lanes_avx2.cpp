// The lane-wise small-matrix routines (linalg_lanes_impl.h) on 32-byte
// vectors: 8 float or 4 double matrices per group.

#include "kernels/cpu/linalg_lanes_impl.h"

namespace bp::kernels::cpu::detail {

int64_t lanes_run_f32_avx2(const LanesBatch& batch) { return lanes_run<float, 32>(batch); }
int64_t lanes_run_f64_avx2(const LanesBatch& batch) { return lanes_run<double, 32>(batch); }

}  // namespace bp::kernels::cpu::detail
