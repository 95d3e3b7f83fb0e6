#pragma once
// The parameters every matmul implementation receives, and the batch loop
// they share.
//
// Note [Matmul params]
// The front end (matmul.cpp) reduces matmul, addmm and linear to one batched
// problem: out[b] = alpha * a[b] @ b[b] + beta * bias[b], where a is
// [batch..., m, k], b is [batch..., k, n] and bias (optional) [batch..., m, n],
// all three already broadcast to the output's batch shape as strided views
// (stride 0 where broadcast: nothing is copied). `out` is a fresh contiguous
// [batch..., m, n] tensor of the inputs' dtype. Implementations must be
// idempotent (autotuning runs them several times on the same params): they
// rebuild out from a, b and bias on every run, never read it.

#include <cstdint>
#include <functional>

#include "backplane/dispatch.h"
#include "backplane/tensor.h"
#include "kernels/cpu/gemm.h"

namespace bp::ops::matmul {

struct Params {
  Tensor a, b, bias, out;
  double alpha = 1.0, beta = 0.0;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  DType dtype = DType::f32;
  Device device = Device::cpu();
  Shape batch_shape;  // out's leading dims (empty for 2-D)

  bool has_bias() const { return bias.defined() && beta != 0.0; }
};

// The problem dispatch sees: dims (batch, m, n, k: the op's signature), dtype, layout class.
enum LayoutBits : uint32_t {
  kATransposed = 1u << 0,  // a's rows are unit-stride (a transposed view)
  kBTransposed = 1u << 1,
  kAStrided = 1u << 2,     // a has no unit stride at all
  kBStrided = 1u << 3,
  kBias = 1u << 4,
};
dispatch::Problem problem_of(const Params& p);

// One 2-D product of the batch, as untyped strided views (element strides).
struct Gemm2D {
  const void* a;
  int64_t a_rs, a_cs;
  const void* b;
  int64_t b_rs, b_cs;
  void* c;          // fp32 for f32/f16/bf16 problems, fp64 for f64, the dtype itself for complex
  int64_t ldc;      // row stride of c (column stride 1)
  double alpha, beta;  // beta is 0 (c is not read) or 1 (c holds beta * bias)
  // f16/bf16 problems: where c is rounded to (row stride ldc). An
  // implementation that rounds c into it itself (builtin's fused epilogue)
  // sets *rounded, and the batch loop then skips its own rounding pass.
  uint16_t* out16 = nullptr;
  bool* rounded = nullptr;
};

// Calls gemm once per batch entry with c prepared (Note [Matmul params]):
// beta * bias written into c when there is a bias, and for f16/bf16 outputs
// c is an fp32 workspace rounded into out afterwards, with the conversion
// variant `round_isa` (an implementation passes its own ISA, so the CPU
// capability cap it was chosen under applies to its rounding too).
void for_each_gemm(const Params& p, const std::function<void(const Gemm2D&)>& gemm,
                   kernels::cpu::GemmIsa round_isa = kernels::cpu::GemmIsa::generic);

// Element offset of batch entry `index` in a tensor whose leading dims are
// p.batch_shape.
int64_t batch_offset(const Tensor& t, const Shape& batch_shape, int64_t index);

}  // namespace bp::ops::matmul
