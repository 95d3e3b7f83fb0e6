// ref:any: the reference. A plain loop nest that accepts every valid CPU
// problem (any float dtype, any strides); it accumulates in fp32 (f64 for
// f64), as the other implementations do, so it is the oracle of their
// tests, not a faster path.

#include "ops/matmul/checks.h"
#include "backplane/dispatch_checks.h"
#include "ops/matmul/impls.h"

namespace bp::ops::matmul {
namespace {

template <class In, class Acc>
void ref_gemm(const Params& p, const Gemm2D& g) {
  const In* a = static_cast<const In*>(g.a);
  const In* b = static_cast<const In*>(g.b);
  Acc* c = static_cast<Acc*>(g.c);
  auto value = [](In x) -> Acc {
    if constexpr (std::is_same_v<In, Half> || std::is_same_v<In, BFloat16>) {
      return to_float(x);
    } else {
      return x;
    }
  };
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      Acc sum = 0;
      for (int64_t q = 0; q < p.k; ++q) sum += value(a[i * g.a_rs + q * g.a_cs]) * value(b[q * g.b_rs + j * g.b_cs]);
      Acc& out = c[i * g.ldc + j];
      out = static_cast<Acc>(g.alpha) * sum + (g.beta != 0 ? out : Acc(0));
    }
}

void run_ref(const Params& p) {
  for_each_gemm(p, [&](const Gemm2D& g) {
    switch (p.dtype) {
      case DType::f64: return ref_gemm<double, double>(p, g);
      case DType::f32: return ref_gemm<float, float>(p, g);
      case DType::bf16: return ref_gemm<BFloat16, float>(p, g);
      case DType::f16: return ref_gemm<Half, float>(p, g);
      default: throw_bad_value("matmul", dtype_name(p.dtype), "float16, bfloat16, float32 or float64");
    }
  });
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_ref() {
  std::vector<dispatch::Check<Params>> list;
  list.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", dispatch::Properties{}, std::move(list), run_ref);
}

}  // namespace bp::ops::matmul
