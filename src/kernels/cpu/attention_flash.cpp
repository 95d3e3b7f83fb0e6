// The tiled online-softmax attention kernel (attention_flash.h).
//
// Per task (batch entry n, query rows i0..i0+nq): Q is loaded once, scaled,
// into an Acc buffer; for each key block the scores Sb = Q·Kᵀ (GEMM), the
// mask and causal limit are applied, and each row's running maximum m,
// normaliser l and output accumulator O are updated:
//   m' = max(m, rowmax(Sb)),  P = exp(Sb - m'),  c = exp(m - m'),
//   l' = c·l + rowsum(P),     O' = c·O + P·V (GEMM with beta = 1).
// At the end out = O / l. Causal tasks stop at the last key their rows see.

#include "kernels/cpu/attention_flash.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backplane/dtype.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bp::kernels::cpu {
namespace {

template <class Acc>
void gemm(GemmIsa isa, MatView<const Acc> a, MatView<const Acc> b, MatView<Acc> c, Acc beta) {
  if constexpr (std::is_same_v<Acc, double>) {
    gemm_f64(isa, a, b, c, 1.0, beta);
  } else {
    gemm_f32(isa, a, b, c, 1.0f, beta);
  }
}

// Element readers/writers for one AttnElem (f16/bf16 travel as raw bits).
template <AttnElem kElem>
struct Elem;
template <>
struct Elem<AttnElem::f32> {
  using T = float;
  static float get(const T* p) { return *p; }
  static void put(T* p, double x) { *p = static_cast<float>(x); }
};
template <>
struct Elem<AttnElem::f64> {
  using T = double;
  static double get(const T* p) { return *p; }
  static void put(T* p, double x) { *p = x; }
};
template <>
struct Elem<AttnElem::f16> {
  using T = uint16_t;
  static float get(const T* p) { return half_bits_to_float(*p); }
  static void put(T* p, double x) { *p = half_bits_from_double(x); }
};
template <>
struct Elem<AttnElem::bf16> {
  using T = uint16_t;
  static float get(const T* p) { return bfloat16_bits_to_float(*p); }
  static void put(T* p, double x) { *p = bfloat16_bits_from_double(x); }
};

// A rows x cols block of a strided view, as a view usable by the GEMM: the
// view itself when it already holds Acc, else a converted copy in `buf`.
template <AttnElem kElem, class Acc>
MatView<const Acc> block(const typename Elem<kElem>::T* base, int64_t rs, int64_t cs, int64_t rows, int64_t cols,
                         std::vector<Acc>& buf) {
  using T = typename Elem<kElem>::T;
  if constexpr (std::is_same_v<T, Acc>) {
    return {base, rows, cols, rs, cs};
  } else {
    buf.resize(static_cast<std::size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) buf[r * cols + c] = static_cast<Acc>(Elem<kElem>::get(base + r * rs + c * cs));
    return {buf.data(), rows, cols, cols, 1};
  }
}

template <AttnElem kElem, class Acc>
void run_task(const FlashAttention& a, int64_t n, int64_t i0, std::vector<Acc>& qbuf, std::vector<Acc>& sbuf,
              std::vector<Acc>& obuf, std::vector<Acc>& kbuf, std::vector<Acc>& vbuf, std::vector<Acc>& m,
              std::vector<Acc>& l) {
  using T = typename Elem<kElem>::T;
  constexpr Acc kNegInf = -std::numeric_limits<Acc>::infinity();
  const int64_t nq = std::min(a.q_block, a.L - i0);
  const int64_t E = a.E, Ev = a.Ev;
  const T* q = static_cast<const T*>(a.q) + a.q_off[n] + i0 * a.q_rs;
  const T* k = static_cast<const T*>(a.k) + a.k_off[n];
  const T* v = static_cast<const T*>(a.v) + a.v_off[n];
  const Acc* mask = a.mask ? static_cast<const Acc*>(a.mask) + a.mask_off[n] : nullptr;

  // Q, pre-scaled, so the scores need no extra pass.
  qbuf.resize(static_cast<std::size_t>(nq * E));
  const Acc scale = static_cast<Acc>(a.scale);
  for (int64_t r = 0; r < nq; ++r)
    for (int64_t e = 0; e < E; ++e) qbuf[r * E + e] = static_cast<Acc>(Elem<kElem>::get(q + r * a.q_rs + e * a.q_cs)) * scale;
  obuf.assign(static_cast<std::size_t>(nq * Ev), Acc(0));
  m.assign(static_cast<std::size_t>(nq), kNegInf);
  l.assign(static_cast<std::size_t>(nq), Acc(0));

  const int64_t kv_end = a.causal ? std::min(a.S, i0 + nq) : a.S;
  for (int64_t j0 = 0; j0 < kv_end; j0 += a.kv_block) {
    const int64_t nk = std::min(a.kv_block, kv_end - j0);
    const MatView<const Acc> kb = block<kElem, Acc>(k + j0 * a.k_rs, a.k_rs, a.k_cs, nk, E, kbuf);
    sbuf.resize(static_cast<std::size_t>(nq * nk));
    // Sb = Q · Kᵀ: Kᵀ is the key block read with swapped strides.
    gemm<Acc>(a.isa, {qbuf.data(), nq, E, E, 1}, {kb.data, E, nk, kb.cs, kb.rs}, {sbuf.data(), nq, nk, nk, 1},
              Acc(0));
    for (int64_t r = 0; r < nq; ++r) {
      Acc* s = sbuf.data() + r * nk;
      const int64_t i = i0 + r;
      if (mask) {
        const Acc* mrow = mask + i * a.mask_rs + j0 * a.mask_cs;
        for (int64_t c = 0; c < nk; ++c) s[c] += mrow[c * a.mask_cs];
      }
      if (a.causal)
        for (int64_t c = std::max<int64_t>(0, i + 1 - j0); c < nk; ++c) s[c] = kNegInf;
      Acc mx = m[r];
      for (int64_t c = 0; c < nk; ++c) mx = std::max(mx, s[c]);
      if (mx == kNegInf) {  // every key so far masked: nothing to add
        std::fill(s, s + nk, Acc(0));
        continue;
      }
      const Acc corr = std::exp(m[r] - mx);
      Acc sum = 0;
      for (int64_t c = 0; c < nk; ++c) {
        s[c] = std::exp(s[c] - mx);
        sum += s[c];
      }
      l[r] = l[r] * corr + sum;
      m[r] = mx;
      if (corr != Acc(1))
        for (int64_t e = 0; e < Ev; ++e) obuf[r * Ev + e] *= corr;
    }
    const MatView<const Acc> vb = block<kElem, Acc>(v + j0 * a.v_rs, a.v_rs, a.v_cs, nk, Ev, vbuf);
    gemm<Acc>(a.isa, {sbuf.data(), nq, nk, nk, 1}, vb, {obuf.data(), nq, Ev, Ev, 1}, Acc(1));
  }

  T* out = static_cast<T*>(a.out) + a.out_off[n] + i0 * a.out_rs;
  for (int64_t r = 0; r < nq; ++r) {
    const Acc inv = l[r] > 0 ? Acc(1) / l[r] : Acc(0);
    for (int64_t e = 0; e < Ev; ++e) Elem<kElem>::put(out + r * a.out_rs + e, obuf[r * Ev + e] * inv);
  }
}

template <AttnElem kElem>
void run_all(const FlashAttention& a) {
  using Acc = std::conditional_t<kElem == AttnElem::f64, double, float>;
  const int64_t q_blocks = (a.L + a.q_block - 1) / a.q_block;
  const int64_t tasks = a.batch * q_blocks;
#pragma omp parallel
  {
    std::vector<Acc> qbuf, sbuf, obuf, kbuf, vbuf, m, l;  // per thread
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; ++t)
      run_task<kElem, Acc>(a, t / q_blocks, (t % q_blocks) * a.q_block, qbuf, sbuf, obuf, kbuf, vbuf, m, l);
  }
}

}  // namespace

void flash_attention(const FlashAttention& args) {
  if (args.L == 0 || args.batch == 0 || args.Ev == 0) return;
  switch (args.elem) {
    case AttnElem::f32: return run_all<AttnElem::f32>(args);
    case AttnElem::f64: return run_all<AttnElem::f64>(args);
    case AttnElem::f16: return run_all<AttnElem::f16>(args);
    case AttnElem::bf16: return run_all<AttnElem::bf16>(args);
  }
}

}  // namespace bp::kernels::cpu
