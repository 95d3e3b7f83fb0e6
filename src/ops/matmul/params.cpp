// The shared batch loop of the matmul implementations (Note [Matmul params]).

#include "ops/matmul/params.h"

#include "core/threads.h"
#include "kernels/cpu/convert.h"
#include "ops/matmul/impls.h"


namespace bp::ops::matmul {
namespace {

uint32_t operand_layout(const Tensor& t, uint32_t transposed_bit, uint32_t strided_bit) {
  const int64_t rs = t.stride(-2), cs = t.stride(-1);
  if (cs == 1 || t.size(-1) == 1) return 0;
  if (rs == 1 || t.size(-2) == 1) return transposed_bit;
  return strided_bit;
}

template <class T>
double element(const Tensor& t, int64_t offset) {
  const T v = static_cast<const T*>(t.data())[offset];
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return to_float(v);
  } else {
    return static_cast<double>(v);
  }
}

double read_element(const Tensor& t, int64_t offset) {
  switch (t.dtype()) {
    case DType::f16: return element<Half>(t, offset);
    case DType::bf16: return element<BFloat16>(t, offset);
    case DType::f32: return element<float>(t, offset);
    case DType::f64: return element<double>(t, offset);
    default: throw_bad_value("matmul", dtype_name(t.dtype()), "float16, bfloat16, float32 or float64");
  }
}

// c[i, j] = beta * bias[i, j] for batch entry `index`.
template <class Acc>
void fill_bias(const Params& p, int64_t index, Acc* c, int64_t ldc) {
  const int64_t base = batch_offset(p.bias, p.batch_shape, index);
  const int64_t rs = p.bias.stride(-2), cs = p.bias.stride(-1);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j)
      c[i * ldc + j] = static_cast<Acc>(p.beta * read_element(p.bias, base + i * rs + j * cs));
}

// The fp32 staging area rounded into the 16-bit output, vectorised
// (kernels/cpu/convert.h) and shared out to the caller's threads in
// chunks: at n = 256 the old scalar loop took half of a bf16 matmul.
void round_into(DType dtype, kernels::cpu::GemmIsa isa, const float* src, uint16_t* dst, int64_t count) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  const int team = threads::team_size(chunks);
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunk, n = std::min(kChunk, count - begin);
    if (dtype == DType::bf16)
      kernels::cpu::round_f32_to_bf16(isa, src + begin, dst + begin, n);
    else
      kernels::cpu::round_f32_to_f16(isa, src + begin, dst + begin, n);
  }
}

template <class Acc>
void run_batches(const Params& p, const std::function<void(const Gemm2D&)>& gemm, kernels::cpu::GemmIsa isa) {
  const std::size_t in_size = dtype_itemsize(p.dtype);
  const bool widen = p.dtype == DType::f16 || p.dtype == DType::bf16;
  // The fp32 staging area of f16/bf16 outputs, counted in memory_stats().
  StoragePtr staging = widen ? allocate_storage(Device::cpu(), static_cast<std::size_t>(p.m * p.n) * sizeof(float))
                             : nullptr;
  float* workspace = widen ? static_cast<float*>(staging->data()) : nullptr;
  const char* a0 = static_cast<const char*>(p.a.data());
  const char* b0 = static_cast<const char*>(p.b.data());
  for (int64_t index = 0; index < p.batch; ++index) {
    Acc* c = widen ? reinterpret_cast<Acc*>(workspace)
                   : static_cast<Acc*>(p.out.data()) + index * p.m * p.n;
    const bool bias = p.has_bias();
    if (bias) fill_bias<Acc>(p, index, c, p.n);
    gemm(Gemm2D{a0 + batch_offset(p.a, p.batch_shape, index) * static_cast<int64_t>(in_size), p.a.stride(-2),
                p.a.stride(-1), b0 + batch_offset(p.b, p.batch_shape, index) * static_cast<int64_t>(in_size),
                p.b.stride(-2), p.b.stride(-1), c, p.n, p.alpha, bias ? 1.0 : 0.0});
    if (widen) round_into(p.dtype, isa, workspace, static_cast<uint16_t*>(p.out.data()) + index * p.m * p.n, p.m * p.n);
  }
}

}  // namespace

int64_t batch_offset(const Tensor& t, const Shape& batch_shape, int64_t index) {
  int64_t offset = 0;
  for (int64_t d = static_cast<int64_t>(batch_shape.size()) - 1; d >= 0; --d) {
    const int64_t size = batch_shape[d];
    offset += (index % size) * t.stride(d);
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
  if (p.dtype == DType::f64) {
    run_batches<double>(p, gemm, round_isa);
  } else {
    run_batches<float>(p, gemm, round_isa);
  }
}

}  // namespace bp::ops::matmul
