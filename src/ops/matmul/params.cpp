// The shared batch loop of the matmul implementations (Note [Matmul params]).

#include "ops/matmul/params.h"

#include <algorithm>
#include <complex>
#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/scratch.h"
#include "ops/matmul/impls.h"


namespace bp::ops::matmul {
namespace {

uint32_t operand_layout(const Tensor& t, uint32_t transposed_bit, uint32_t strided_bit) {
  const int64_t rs = t.stride(-2), cs = t.stride(-1);
  if (cs == 1 || t.size(-1) == 1) return 0;
  if (rs == 1 || t.size(-2) == 1) return transposed_bit;
  return strided_bit;
}

// c[i, j] = beta * bias[i, j] for batch entry `index`, with the products in
// double (std::complex<double> for complex) as PyTorch's addmm scales them.
// The dtype is resolved once, outside the loops, and a bias that is one row
// broadcast down the rows (linear's) is computed once and copied: the old
// per-element dtype switch made linear with a bias twice as slow as matmul.
template <class Acc>
void fill_bias(const Params& p, int64_t index, Acc* c, int64_t ldc) {
  using W = std::conditional_t<std::is_floating_point_v<Acc>, double, std::complex<double>>;
  const int64_t base = batch_offset(p.bias, p.batch_shape, index);
  const int64_t rs = p.bias.stride(-2), cs = p.bias.stride(-1);
  visit_dtype(p.bias.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_constructible_v<W, T>) {
      const T* src = static_cast<const T*>(p.bias.data()) + base;
      const auto scaled = [&](int64_t offset) {
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
          return static_cast<Acc>(p.beta * static_cast<double>(to_float(src[offset])));
        else
          return static_cast<Acc>(p.beta * static_cast<W>(src[offset]));
      };
      const int64_t rows = rs == 0 ? std::min<int64_t>(p.m, 1) : p.m;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < p.n; ++j) c[i * ldc + j] = scaled(i * rs + j * cs);
      for (int64_t i = rows; i < p.m; ++i) std::memcpy(c + i * ldc, c, static_cast<std::size_t>(p.n) * sizeof(Acc));
    } else {
      throw_bad_value("matmul", dtype_name(p.bias.dtype()), "a bias of the operands' dtype");
    }
  });
}

// The fp32 staging area of f16/bf16 outputs: a kernel scratch slot of the
// calling thread (Note [Kernel scratch]; a fresh 16 MiB area per 2048^2
// product cost 1% of it in page faults), bounded as bounded_scratch says.
float* staging_area(std::size_t bytes, StoragePtr& owned) {
  return kernels::cpu::bounded_scratch(kernels::cpu::ScratchSlot::matmul_staging, bytes / sizeof(float), owned);
}

template <class Acc>
void run_batches(const Params& p, const std::function<void(const Gemm2D&)>& gemm, kernels::cpu::GemmIsa isa) {
  const int64_t in_size = static_cast<int64_t>(dtype_itemsize(p.dtype));
  const bool widen = p.dtype == DType::f16 || p.dtype == DType::bf16;
  StoragePtr owned;
  float* workspace =
      widen ? staging_area(static_cast<std::size_t>(p.m * p.n) * sizeof(float), owned) : nullptr;
  const char* a0 = static_cast<const char*>(p.a.data());
  const char* b0 = static_cast<const char*>(p.b.data());
  const int64_t a_rs = p.a.stride(-2), a_cs = p.a.stride(-1), b_rs = p.b.stride(-2), b_cs = p.b.stride(-1);
  const bool bias = p.has_bias();
  for (int64_t index = 0; index < p.batch; ++index) {
    Acc* c = widen ? reinterpret_cast<Acc*>(workspace)
                   : static_cast<Acc*>(p.out.data()) + index * p.m * p.n;
    uint16_t* out16 = widen ? static_cast<uint16_t*>(p.out.data()) + index * p.m * p.n : nullptr;
    bool rounded = false;
    if (bias) fill_bias<Acc>(p, index, c, p.n);
    const int64_t oa = batch_offset(p.a, p.batch_shape, index), ob = batch_offset(p.b, p.batch_shape, index);
    gemm(Gemm2D{a0 + oa * in_size, a_rs, a_cs, b0 + ob * in_size, b_rs, b_cs, c, p.n, p.alpha, bias ? 1.0 : 0.0,
                out16, &rounded});
    // The fp32 staging area rounded into the 16-bit output, vectorised and shared out (convert.h): at n = 256
    // a scalar loop took half of a bf16 matmul.
    if (widen && !rounded) kernels::cpu::round_f32_to(p.dtype, isa, workspace, out16, p.m * p.n);
  }
}

}  // namespace

int64_t batch_offset(const Tensor& t, const Shape& batch_shape, int64_t index) {
  // The strides read straight from the vector: Tensor::stride(d) checks and
  // wraps d on every call, which a batch of tiny products paid per entry.
  const Shape& strides = t.strides();
  int64_t offset = 0;
  for (std::size_t d = batch_shape.size(); d-- > 0;) {
    const int64_t size = batch_shape[d];
    offset += (index % size) * strides[d];
    index /= size;
  }
  return offset;
}

dispatch::Problem problem_of(const Params& p) {
  const uint32_t layout = operand_layout(p.a, kATransposed, kAStrided) | operand_layout(p.b, kBTransposed, kBStrided) |
                          (p.has_bias() ? static_cast<uint32_t>(kBias) : 0u);
  return matmul_op().problem(p.device, p.dtype, layout, {p.batch, p.m, p.n, p.k});
}

void for_each_gemm(const Params& p, const std::function<void(const Gemm2D&)>& gemm, kernels::cpu::GemmIsa round_isa) {
  switch (p.dtype) {
    case DType::f64: return run_batches<double>(p, gemm, round_isa);
    case DType::c64: return run_batches<std::complex<float>>(p, gemm, round_isa);
    case DType::c128: return run_batches<std::complex<double>>(p, gemm, round_isa);
    default: return run_batches<float>(p, gemm, round_isa);
  }
}

}  // namespace bp::ops::matmul
