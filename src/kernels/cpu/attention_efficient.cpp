// The memory-efficient attention kernel (attention_efficient.h).
//
// A task is one batch entry and one block of query rows. For every key block
// it forms the scaled scores straight from the strided q and k (one GEMM),
// folds each score row into that row's running (max m, normaliser l,
// unnormalised output o), and adds the block's weights times v (a second
// GEMM, beta = 1). Folding a row: m' = max(m, max(s)); o and l shrink by
// exp(m - m'); s becomes exp(s - m') and l grows by its sum. The output is
// o / l, or 0 for a row that never saw a key.

#include "kernels/cpu/attention_efficient.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "backplane/error.h"
#include "core/threads.h"
#include "kernels/cpu/attention_flash.h"
#include "kernels/cpu/bf16_round.h"

namespace bp::kernels::cpu {
namespace {

// Storage type, arithmetic type and conversions of one input dtype.
template <DType D>
struct Io {
  using T = std::conditional_t<D == DType::f64, double, std::conditional_t<D == DType::f32, float, uint16_t>>;
  using Acc = std::conditional_t<D == DType::f64, double, float>;
  static T narrow(double x) {
    if constexpr (D == DType::f16) return half_bits_from_double(x);
    else if constexpr (D == DType::bf16) return bfloat16_bits_from_double(x);
    else return static_cast<T>(x);
  }
};

// Per-thread memory, reused across tasks.
template <class Acc>
struct Workspace {
  std::vector<Acc> s;     // q_block x kv_block scores, then weights
  std::vector<Acc> o;     // q_block x Ev unnormalised output
  std::vector<Acc> m, l;  // per row: running max and normaliser
  std::vector<Acc> wide;  // kv_block x Ev widened values (f16 only)
  std::vector<uint16_t> w16;  // q_block x kv_block weights as bf16 (bf16 only)
  std::vector<float> st;      // kv_block x nq transposed scores (few-query f16/bf16 only)
};

// Note [Few-query 16-bit scores]
// With few query rows (decode with folded GQA heads), q·kᵀ with kᵀ as the
// GEMM's B packs the 16-bit key block through a strided transpose (pairs of
// keys per column): in bf16 decode that made efficient:cpu half as fast as
// flash:cpu. Below kFewQueries rows the scores are formed transposed, k·qᵀ
// (the key block packs along its contiguous rows), into a small buffer and
// copied back row-major: nq x nk floats per block.
constexpr int64_t kFewQueries = 48;

// Note [Efficient causal steps]
// Causal: the keys up to a query block's first row are seen by all of its
// rows and go by whole key blocks; the keys of the block's own diagonal go
// by kCausalStep-key steps, each for the rows from the first one that sees
// any of its keys. So the triangle above the diagonal is computed (and then
// masked) only within a step, not across a whole 384 x 384 square and the
// key blocks that straddle it. Smaller steps leave less of it but make
// narrower products (the f32 tile is 48 columns wide, the bf16 pairs' 32)
// and pack the query rows once more each; at L = 4096, one thread, the
// efficient / flash time ratio, interleaved in one process (medians of 16):
// steps of 128 beat the whole square by 1.04-1.08x (D64 and D128, f32 and
// bf16), steps of 64-96 and 192-256 fell between.
constexpr int64_t kCausalStep = 128;

// s (nq x nk, contiguous) = scale · q_rows · k_rowsᵀ, read in place.
template <DType D>
void scores(const EfficientAttention& a, const typename Io<D>::T* q, int64_t nq, const typename Io<D>::T* k,
            int64_t nk, typename Io<D>::Acc* s) {
  using T = typename Io<D>::T;
  const MatView<const T> lhs{q, nq, a.E, a.q.rs, a.q.cs};
  const MatView<const T> rhs{k, a.E, nk, a.k.cs, a.k.rs};  // kᵀ: k with its strides swapped
  const MatView<typename Io<D>::Acc> c{s, nq, nk, nk, 1};
  if constexpr (D == DType::f64) gemm_f64(a.isa, lhs, rhs, c, a.scale, 0.0);
  else if constexpr (D == DType::f32) gemm_f32(a.isa, lhs, rhs, c, static_cast<float>(a.scale), 0.0f);
  else if constexpr (D == DType::f16) gemm_f16(a.half_isa, lhs, rhs, c, static_cast<float>(a.scale), 0.0f);
  else gemm_bf16(a.half_isa, lhs, rhs, c, static_cast<float>(a.scale), 0.0f);
}

// The scores of a few-query block (Note [Few-query 16-bit scores]), f16/bf16.
template <DType D>
void scores_few(const EfficientAttention& a, const uint16_t* q, int64_t nq, const uint16_t* k, int64_t nk, float* s,
                std::vector<float>& st) {
  st.resize(static_cast<std::size_t>(nk * nq));
  const MatView<const uint16_t> kb{k, nk, a.E, a.k.rs, a.k.cs};
  const MatView<const uint16_t> qt{q, a.E, nq, a.q.cs, a.q.rs};
  auto* half_gemm = D == DType::bf16 ? &gemm_bf16 : &gemm_f16;
  half_gemm(a.half_isa, kb, qt, {st.data(), nk, nq, nq, 1}, static_cast<float>(a.scale), 0.0f, {}, nullptr);
  for (int64_t r = 0; r < nq; ++r)
    for (int64_t c = 0; c < nk; ++c) s[r * nk + c] = st[c * nq + r];
}

// dst (nk x Ev, contiguous) = the f16 value rows at v widened: with F16C where the rows are contiguous
// and the ISA allows it, as flash:cpu widens its value blocks.
void widen_values(const EfficientAttention& a, const uint16_t* v, int64_t nk, float* dst) {
  const SoftmaxVec vec = softmax_vec_for(a.isa);
  if (vec != SoftmaxVec::scalar && a.v.cs == 1) {
    (vec == SoftmaxVec::avx512 ? detail::widen_f16_rows_avx512 : detail::widen_f16_rows_avx2)(v, a.v.rs, nk, a.Ev, dst);
    return;
  }
  for (int64_t r = 0; r < nk; ++r)
    for (int64_t c = 0; c < a.Ev; ++c) dst[r * a.Ev + c] = half_bits_to_float(v[r * a.v.rs + c * a.v.cs]);
}

// o (nq x Ev, row stride Ev) += w (nq x nk) · v_rows. bf16: the weights are already
// bf16 in ws.w16 (fold_row) and v is read in place (as flash:cpu does, Note
// [bf16 flash]); f16 values are widened first, since the weights are in Acc.
template <DType D>
void add_values(const EfficientAttention& a, const typename Io<D>::Acc* w, int64_t nq, int64_t nk,
                const typename Io<D>::T* v, typename Io<D>::Acc* o, Workspace<typename Io<D>::Acc>& ws) {
  using Acc = typename Io<D>::Acc;
  if constexpr (D == DType::bf16) {
    gemm_bf16(a.half_isa, {ws.w16.data(), nq, nk, nk, 1}, {v, nk, a.Ev, a.v.rs, a.v.cs}, {o, nq, a.Ev, a.Ev, 1}, 1.0f,
              1.0f);
    return;
  }
  MatView<const Acc> vb{nullptr, nk, a.Ev, 0, 0};
  if constexpr (std::is_same_v<typename Io<D>::T, Acc>) {
    vb.data = v, vb.rs = a.v.rs, vb.cs = a.v.cs;
  } else {
    ws.wide.resize(static_cast<std::size_t>(nk * a.Ev));
    widen_values(a, v, nk, ws.wide.data());
    vb.data = ws.wide.data(), vb.rs = a.Ev, vb.cs = 1;
  }
  const MatView<const Acc> lhs{w, nq, nk, nk, 1};
  const MatView<Acc> c{o, nq, a.Ev, a.Ev, 1};
  if constexpr (std::is_same_v<Acc, double>) gemm_f64(a.isa, lhs, vb, c, 1.0, 1.0);
  else gemm_f32(a.isa, lhs, vb, c, 1.0f, 1.0f);
}

// Folds one score row (keys j0..j0+nk of query row i) into its running
// state and leaves the row's weights in s (0 for keys it does not see), or
// for bf16 (w not null) in w, rounded: one pass from the scores to the
// weights the value GEMM reads.
template <class Acc>
void fold_row(const EfficientAttention& a, const Acc* mask_row, int64_t i, int64_t j0, int64_t nk, Acc* s,
              uint16_t* w, Acc& m, Acc& l, Acc* o) {
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  // Keys past i are cut off by the causal limit.
  const int64_t visible = a.causal ? std::clamp<int64_t>(i + 1 - j0, 0, nk) : nk;
  if (mask_row)
    for (int64_t c = 0; c < visible; ++c) s[c] += mask_row[c * a.mask.cs];
  const SoftmaxVec vec = softmax_vec_for(a.isa);
  const Acc m_new = row_max(s, visible, m, vec);  // Note [NaN in attention]
  if (m_new == kNegInf) {  // no key seen so far: the row contributes nothing yet
    if (w) std::fill(w, w + nk, uint16_t{0});
    else std::fill(s, s + nk, Acc(0));
    return;
  }
  Acc sum;
  if constexpr (std::is_same_v<Acc, float>) {
    if (w && a.half_isa == GemmIsa::avx512_bf16 && flash_bf16_step_supported()) {
      sum = detail::exp_shifted_sum_to_bf16_avx512bf16(s, visible, m_new, w);
    } else {
      sum = exp_shifted_sum(s, visible, m_new, vec);
      if (w && vec == SoftmaxVec::avx512) detail::round_bf16_avx512(s, w, visible);
      else if (w)
        for (int64_t c = 0; c < visible; ++c) w[c] = finite_to_bf16(s[c]);
    }
  } else {
    sum = exp_shifted_sum(s, visible, m_new, vec);
  }
  if (w) std::fill(w + visible, w + nk, uint16_t{0});
  else std::fill(s + visible, s + nk, Acc(0));
  const Acc shrink = std::exp(m - m_new);  // 0 on the first visible block, 1 when the max holds
  if (shrink != Acc(1)) {
    l *= shrink;
    for (int64_t e = 0; e < a.Ev; ++e) o[e] *= shrink;
  }
  l += sum;
  m = m_new;
}

template <DType D>
void run_task(const EfficientAttention& a, int64_t n, int64_t i0, Workspace<typename Io<D>::Acc>& ws) {
  using T = typename Io<D>::T;
  using Acc = typename Io<D>::Acc;
  const int64_t nq = std::min(a.q_block, a.L - i0);
  const T* q = static_cast<const T*>(a.q.data) + a.q.off[n] + i0 * a.q.rs;
  const T* k = static_cast<const T*>(a.k.data) + a.k.off[n];
  const T* v = static_cast<const T*>(a.v.data) + a.v.off[n];
  const Acc* mask = a.mask.data ? static_cast<const Acc*>(a.mask.data) + a.mask.off[n] : nullptr;
  ws.o.assign(static_cast<std::size_t>(nq * a.Ev), Acc(0));
  ws.m.assign(static_cast<std::size_t>(nq), -std::numeric_limits<Acc>::infinity());
  ws.l.assign(static_cast<std::size_t>(nq), Acc(0));

  // Keys j0 .. j0 + nk - 1 for query rows r0 .. nq - 1 (the rows before r0 see none of them).
  auto key_block = [&](int64_t j0, int64_t nk, int64_t r0) {
    const int64_t rows = nq - r0;
    const T* qr = q + r0 * a.q.rs;
    ws.s.resize(static_cast<std::size_t>(rows * nk));
    if constexpr (D == DType::bf16 || D == DType::f16) {
      if (rows < kFewQueries) scores_few<D>(a, qr, rows, k + j0 * a.k.rs, nk, ws.s.data(), ws.st);
      else scores<D>(a, qr, rows, k + j0 * a.k.rs, nk, ws.s.data());
    } else {
      scores<D>(a, qr, rows, k + j0 * a.k.rs, nk, ws.s.data());
    }
    uint16_t* w16 = nullptr;
    if constexpr (D == DType::bf16) {
      ws.w16.resize(static_cast<std::size_t>(rows * nk));
      w16 = ws.w16.data();
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r0 + r;
      const Acc* mask_row = mask ? mask + i * a.mask.rs + j0 * a.mask.cs : nullptr;
      fold_row<Acc>(a, mask_row, i, j0, nk, ws.s.data() + r * nk, w16 ? w16 + r * nk : nullptr, ws.m[r0 + r],
                    ws.l[r0 + r], ws.o.data() + (r0 + r) * a.Ev);
    }
    add_values<D>(a, ws.s.data(), rows, nk, v + j0 * a.v.rs, ws.o.data() + r0 * a.Ev, ws);
  };
  // Causal: no row of this block sees a key past its last row, and the keys past its first row's go by
  // steps, each for the rows that see any of it (Note [Efficient causal steps]).
  const int64_t kv_end = a.causal ? std::min(a.S, i0 + nq) : a.S;
  const int64_t full_end = a.causal ? std::min(kv_end, i0 + 1) : kv_end;  // keys every row of the block sees
  for (int64_t j0 = 0; j0 < full_end; j0 += a.kv_block) key_block(j0, std::min(a.kv_block, full_end - j0), 0);
  for (int64_t js = full_end; js < kv_end; js += kCausalStep)
    key_block(js, std::min(kCausalStep, kv_end - js), js - i0);

  T* out = static_cast<T*>(a.out) + a.out_off[n] + i0 * a.out_rs;
  if constexpr (std::is_same_v<Acc, float>) {
    if (softmax_vec_for(a.isa) == SoftmaxVec::avx512) {  // vector narrowing (the scalar one was 6% of bf16 time)
      const int elem = D == DType::f32 ? 0 : D == DType::bf16 ? 1 : 2;
      return detail::store_out_avx512(ws.o.data(), a.Ev, 1, nq, a.Ev, ws.l.data(), elem, out, a.out_rs);
    }
  }
  for (int64_t r = 0; r < nq; ++r) {
    const Acc inv = inverse_normaliser(ws.l[r]);
    for (int64_t e = 0; e < a.Ev; ++e) out[r * a.out_rs + e] = Io<D>::narrow(ws.o[r * a.Ev + e] * inv);
  }
}

template <DType D>
void run(const EfficientAttention& a) {
  const int64_t q_blocks = (a.L + a.q_block - 1) / a.q_block;
  const int64_t tasks = a.batch * q_blocks;
  const int team = threads::team_size(tasks);  // Note [Team sizes]
#pragma omp parallel num_threads(team) if (team > 1)
  {
    Workspace<typename Io<D>::Acc> ws;
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; ++t) run_task<D>(a, t / q_blocks, (t % q_blocks) * a.q_block, ws);
  }
}

}  // namespace

void efficient_attention(const EfficientAttention& args) {
  if (args.batch == 0 || args.L == 0 || args.Ev == 0) return;
  switch (args.dtype) {
    case DType::f32: return run<DType::f32>(args);
    case DType::f64: return run<DType::f64>(args);
    case DType::f16: return run<DType::f16>(args);
    case DType::bf16: return run<DType::bf16>(args);
    default: throw_runtime("efficient_attention", std::string("no kernel for dtype ") + dtype_name(args.dtype));
  }
}

}  // namespace bp::kernels::cpu
