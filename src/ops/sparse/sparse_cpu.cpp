// sparse24:cpu: Backplane's own 2:4 kernel (kernels/cpu/sparse24.h) on the
// compressed values and metadata, never decompressing.
//
// Arithmetic: f32 in fp32 FMAs; bf16 with AVX512_BF16 pair dot products
// (fp32 accumulation), and f32 the same way only when the fp32 precision of
// (mkldnn, matmul) permits bf16 ("medium"), as matmul's builtin:avx512_bf16
// (Note [fp32 precision tree]); bf16 on a CPU without AVX512_BF16 is
// widened to f32 first. f16, and 1-3 rows of X of any dtype, take the AVX2
// kernel (fp32 arithmetic, 16-bit operands widened as loaded; kRowDotMax).
// Needs AVX-512 (a check on the CPU capability, so a cap shows in explain).

#include "backplane/dispatch_checks.h"
#include "kernels/cpu/sparse24.h"
#include "ops/sparse/impls.h"
#include "ops/sparse/params.h"

namespace bp::ops::sparse {
namespace {

bool bf16_arithmetic(const Params& p) {
  if (!kernels::cpu::sparse24_supported(true)) return false;
  if (p.dtype == DType::bf16) return true;
  return p.dtype == DType::f32 &&
         precision::resolved(precision::Backend::mkldnn, precision::Op::matmul) == flags::Precision::bf16;
}

kernels::cpu::Sparse24Input input_of(const Tensor& x) { return {x.data(), x.size(0), x.stride(0), x.stride(1)}; }

// At most this many rows of X take the AVX2 kernel's row dots (sparse24.h;
// every AVX-512 CPU has AVX2, FMA and F16C): W is streamed once at half the
// dense weight's bytes, where a panel or a 16-row vector would fill 1-3 of
// 16 lanes or transpose W for one use. At 4096 x 4096 on Zen 5, m = 1:
// f32 1.4 ms against 4.5 ms for the panel kernel, bf16 0.95 ms against 2.8.
// They compute in fp32 whatever the precision (bf16 operands widen exactly).
constexpr int64_t kRowDotMax = 3;

void run(const Params& p) {
  Staging s = staging(p);
  // f16 (no f16 dot product here) also takes the AVX2 kernel, which widens
  // it as it loads: widening W to an f32 copy per call first (the AVX-512
  // f32 kernel's input) cost more than the product (4096 x 4096 x 16: 84 ms
  // against 7 ms).
  if ((p.m <= kRowDotMax || p.dtype == DType::f16) && kernels::cpu::sparse24_avx2_supported()) {
    const kernels::cpu::Sparse24Type type = p.dtype == DType::bf16  ? kernels::cpu::Sparse24Type::bf16
                                            : p.dtype == DType::f16 ? kernels::cpu::Sparse24Type::f16
                                                                    : kernels::cpu::Sparse24Type::f32;
    const kernels::cpu::Sparse24 w{p.values.data(), p.values.stride(0), static_cast<const uint8_t*>(p.meta.data()),
                                   p.meta.stride(0), p.n, p.k};
    kernels::cpu::sparse24_avx2(w, input_of(p.x), type, s.c, p.out_rs, p.out_cs);
    finish(p, s);
    return;
  }
  const bool bf16 = bf16_arithmetic(p);
  Tensor values = p.values, x = p.x;
  if (!bf16 && p.dtype != DType::f32) {  // f16, or bf16 without AVX512_BF16: widen
    values = values.to(DType::f32);
    x = x.to(DType::f32);
  }
  const kernels::cpu::Sparse24 w{values.data(), values.stride(0), static_cast<const uint8_t*>(p.meta.data()),
                                 p.meta.stride(0), p.n, p.k};
  if (bf16)
    kernels::cpu::sparse24_bf16_avx512(w, values.dtype() == DType::f32, input_of(x), x.dtype() == DType::f32, s.c,
                                       p.out_rs, p.out_cs);
  else
    kernels::cpu::sparse24_f32_avx512(w, input_of(x), s.c, p.out_rs, p.out_cs);
  finish(p, s);
}

std::optional<dispatch::Availability> hardware() {
  if (kernels::cpu::sparse24_supported(false)) return dispatch::Availability{true, true, ""};
  return dispatch::Availability{true, false, "not available: this CPU lacks AVX-512 (F, BW, DQ, VL)"};
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_sparse24_cpu() {
  using namespace dispatch::checks;
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dtype_in<Params>({DType::f32, DType::bf16, DType::f16}));
  list.push_back(cpu_capability_at_least<Params>(backends::cpu::CpuCapability::Avx512));
  dispatch::Properties props;
  props.reduced = dispatch::kBf16;
  props.workspace = "X packed per panel of 64 rows (bf16: X as bf16 rows, and per thread a 64-row block of W transposed with its vpermw indices)";
  return std::make_unique<dispatch::Impl<Params>>("sparse24:cpu", "cpu", props, std::move(list), run,
                                                  precision::path(precision::Backend::mkldnn, precision::Op::matmul),
                                                  hardware);
}

}  // namespace bp::ops::sparse
