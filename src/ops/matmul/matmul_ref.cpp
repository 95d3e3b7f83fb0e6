// ref:any: the reference. A plain loop nest that accepts every valid CPU
// problem (any float dtype, any strides); it accumulates in fp32 (f64 for
// f64), as the other implementations do, so it is the oracle of their
// tests, not a faster path. It is also the one implementation of integer
// products (int8, int32, int64), exact with two's-complement wrapping, as
// PyTorch computes them on the CPU.

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

// Integer products, exact: the sum of products in 64-bit unsigned
// arithmetic, which wraps as two's complement does (signed overflow would
// be undefined), then truncated to the dtype, as PyTorch's CPU result reads.
template <class T>
void ref_integer(const Params& p) {
  const auto alpha = static_cast<uint64_t>(static_cast<int64_t>(p.alpha));
  const auto beta = static_cast<uint64_t>(static_cast<int64_t>(p.beta));
  const T* a0 = static_cast<const T*>(p.a.data());
  const T* b0 = static_cast<const T*>(p.b.data());
  const T* bias0 = p.has_bias() ? static_cast<const T*>(p.bias.data()) : nullptr;
  T* out = static_cast<T*>(p.out.data());
  for (int64_t index = 0; index < p.batch; ++index) {
    const T* a = a0 + batch_offset(p.a, p.batch_shape, index);
    const T* b = b0 + batch_offset(p.b, p.batch_shape, index);
    const T* bias = bias0 ? bias0 + batch_offset(p.bias, p.batch_shape, index) : nullptr;
    T* c = out + index * p.m * p.n;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        uint64_t sum = 0;
        for (int64_t q = 0; q < p.k; ++q)
          sum += static_cast<uint64_t>(static_cast<int64_t>(a[i * p.a.stride(-2) + q * p.a.stride(-1)])) *
                 static_cast<uint64_t>(static_cast<int64_t>(b[q * p.b.stride(-2) + j * p.b.stride(-1)]));
        uint64_t v = alpha * sum;
        if (bias) v += beta * static_cast<uint64_t>(static_cast<int64_t>(bias[i * p.bias.stride(-2) + j * p.bias.stride(-1)]));
        c[i * p.n + j] = static_cast<T>(v);
      }
  }
}

void run_ref(const Params& p) {
  switch (p.dtype) {
    case DType::i8: return ref_integer<int8_t>(p);
    case DType::i32: return ref_integer<int32_t>(p);
    case DType::i64: return ref_integer<int64_t>(p);
    default: break;
  }
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
  list.push_back(dispatch::checks::dtype_in<Params>(
      {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i8, DType::i32, DType::i64}));
  return std::make_unique<dispatch::Impl<Params>>("ref:any", "cpu", dispatch::Properties{}, std::move(list), run_ref);
}

}  // namespace bp::ops::matmul
