// sparse24:avx2: Backplane's own 2:4 kernel for AVX2 + FMA + F16C CPUs
// (kernels/cpu/sparse24.h, sparse24_avx2.cpp) on the compressed values and
// metadata, never decompressing. (This file's name avoids the _avx2.cpp
// suffix on purpose: that suffix compiles a file with AVX2 flags, and the
// checks here run on every CPU.)
//
// Arithmetic: fp32 FMAs for every dtype; bf16 and f16 operands are widened
// to f32 as they are loaded, which is exact, so no precision setting changes
// the result (the "medium" fp32 precision has no bf16 path here: AVX2 has no
// bf16 dot product). Needs AVX2 (a check on the CPU capability, so a cap
// shows in explain), as matmul's builtin:avx2.

#include "backplane/dispatch_checks.h"
#include "kernels/cpu/sparse24.h"
#include "ops/sparse/impls.h"
#include "ops/sparse/params.h"

namespace bp::ops::sparse {
namespace {

using kernels::cpu::Sparse24Type;

Sparse24Type type_of(DType d) {
  switch (d) {
    case DType::bf16: return Sparse24Type::bf16;
    case DType::f16: return Sparse24Type::f16;
    default: return Sparse24Type::f32;  // the dtype check admits f32, bf16, f16 only
  }
}

void run(const Params& p) {
  Staging s = staging(p);
  const kernels::cpu::Sparse24 w{p.values.data(), p.values.stride(0), static_cast<const uint8_t*>(p.meta.data()),
                                 p.meta.stride(0), p.n, p.k};
  const kernels::cpu::Sparse24Input x{p.x.data(), p.x.size(0), p.x.stride(0), p.x.stride(1)};
  kernels::cpu::sparse24_avx2(w, x, type_of(p.dtype), s.c, p.out_rs, p.out_cs);
  finish(p, s);
}

std::optional<dispatch::Availability> hardware() {
  if (kernels::cpu::sparse24_avx2_supported()) return dispatch::Availability{true, true, ""};
  return dispatch::Availability{true, false, "not available: this CPU lacks AVX2, FMA or F16C"};
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_sparse24_avx2() {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dtype_in<Params>({DType::f32, DType::bf16, DType::f16}));
  list.push_back(cpu_capability_at_least<Params>(backends::cpu::CpuCapability::Avx2));
  dispatch::Properties props;
  props.workspace = "X packed per panel of 8-32 rows as f32 (1-4 rows: X's rows as f32)";
  return std::make_unique<dispatch::Impl<Params>>("sparse24:avx2", "cpu", props, std::move(list), run,
                                                  std::vector<flags::Id>{}, hardware);
}

}  // namespace bp::ops::sparse
