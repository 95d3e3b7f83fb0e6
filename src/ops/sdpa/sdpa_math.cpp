// math:any: the math composition (math_composition.h) on the CPU. It
// accepts every valid problem, so it is the last entry of the list.

#include <algorithm>
#include <cmath>
#include <limits>

#include "backplane/flags.h"
#include "backplane/ops/matmul.h"
#include "backplane/runtime.h"
#include "core/threads.h"
#include "kernels/cpu/attention_flash.h"
#include "ops/sdpa/checks.h"
#include "ops/sdpa/gemm_isa.h"
#include "backplane/dispatch_checks.h"
#include "ops/sdpa/impls.h"
#include "ops/sdpa/math_composition.h"

namespace bp::ops::sdpa {
namespace {

// In place on contiguous [ext..., L, S] scores: scale, mask, causal, safe
// softmax, dropout. Rows are independent, so they are shared out to threads.
template <class Acc>
void softmax_rows(const Params& p, Acc* scores) {
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  const Acc* mask = p.mask.defined() ? static_cast<const Acc*>(p.mask.data()) : nullptr;
  const int64_t mrs = mask ? p.mask.stride(-2) : 0, mcs = mask ? p.mask.stride(-1) : 0;
  const bool dropout = p.dropout_p > 0;
  PhiloxStream stream;
  if (dropout) stream = default_generator().reserve(static_cast<uint64_t>(p.batch * p.L * p.S));
  const Acc keep_scale = p.dropout_p < 1 ? Acc(1) / Acc(1 - p.dropout_p) : Acc(0);
  const int64_t rows = p.batch * p.L;
  // f32 rows take the flash kernel's vector exp (AVX-512 or AVX2) where the
  // ISA and the CPU-capability cap allow it (the exp was 2/3 of this path's time).
  const kernels::cpu::SoftmaxVec vec_exp = kernels::cpu::softmax_vec_for(pick_gemm_isa());
  // A thread per 16 Ki scores at most, so small problems stay on one (Note [Team sizes]).
  const int team = threads::team_size(std::min(rows, std::max<int64_t>(1, rows * p.S / 16384)));
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t b = row / p.L, i = row % p.L;
    Acc* s = scores + row * p.S;
    const Acc* m = mask ? mask + batch_offset(p, p.mask, b) + i * mrs : nullptr;
    Acc mx = kNegInf;
    for (int64_t j = 0; j < p.S; ++j) {
      Acc x = s[j] * static_cast<Acc>(p.scale);
      if (m) x += m[j * mcs];
      if (p.is_causal && j > i) x = kNegInf;
      s[j] = x;
      mx = kernels::cpu::nan_max(mx, x);  // Note [NaN in attention]
    }
    if (mx == kNegInf) {  // every key masked out: the row attends to nothing
      std::fill(s, s + p.S, Acc(0));
      continue;
    }
    const Acc inv = Acc(1) / kernels::cpu::exp_shifted_sum(s, p.S, mx, vec_exp);
    for (int64_t j = 0; j < p.S; ++j) {
      s[j] *= inv;
      if (dropout)
        s[j] = stream.uniform(static_cast<uint64_t>(row * p.S + j)) < p.dropout_p ? Acc(0) : s[j] * keep_scale;
    }
  }
}

void run_math(const Params& p) {
  MathSteps steps;
  steps.softmax = [](const Params& q, Tensor& scores) {
    if (scores.dtype() == DType::f64)
      softmax_rows<double>(q, scores.data_ptr<double>());
    else
      softmax_rows<float>(q, scores.data_ptr<float>());
  };
  steps.cast_into = [](Tensor& dst, const Tensor& src) { dst.copy_from(src); };
  run_math_composition(p, steps);
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_math() {
  // Typed Check{...} pushes: GCC 12 crashes (nothrow_spec_p) on a braced list of them here.
  using C = dispatch::Check<Params>;
  std::vector<C> list;
  list.push_back(dispatch::checks::enabled<Params>(flags::Id::cuda_math_sdp_enabled,
                                                   "math attention enabled (backends.cuda.enable_math_sdp(True))"));
  dispatch::Properties props;
  props.deterministic = true;
  props.workspace = "the L x S scores of every batch entry";
  props.calls = {"matmul"};  // its two GEMMs go through matmul's dispatch
  std::vector<flags::Id> reads = gemm_isa_reads();  // its softmax's vector exp
  reads.push_back(flags::Id::cuda_fp16_bf16_reduction_math_sdp_allowed);
  return std::make_unique<dispatch::Impl<Params>>("math:any", "cpu", props, std::move(list), run_math, reads);
}

void run_math_composition(const Params& p, const MathSteps& steps) {
  const bool low = p.dtype == DType::f16 || p.dtype == DType::bf16;
  const DType work = low && !backends::cuda::fp16_bf16_reduction_math_sdp_allowed() ? DType::f32 : p.dtype;
  const DType acc = compute_dtype(p.dtype);
  // t in dtype: t itself when it has it, else a fresh contiguous copy.
  auto cast = [&](const Tensor& t, DType dtype) {
    if (t.dtype() == dtype) return t;
    Tensor out = Tensor::empty(t.shape(), dtype, t.device());
    steps.cast_into(out, t);
    return out;
  };
  const Tensor q = cast(p.q, work), k = cast(p.k, work), v = cast(p.v, work);
  // matmul returns a fresh contiguous tensor, and cast a fresh one when the
  // dtype changes, so the softmax may write in place.
  Tensor scores = cast(bp::matmul(q, k.T()), acc);
  steps.softmax(p, scores);
  const Tensor o = bp::matmul(cast(scores, work), v);
  Tensor out = p.out;
  steps.cast_into(out, o);
}

}  // namespace bp::ops::sdpa
