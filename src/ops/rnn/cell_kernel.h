#pragma once
// The recurrent step of packed:cpu (rnn_packed.cpp), written once over a
// vector type and compiled per ISA (cell_generic.cpp, cell_avx2.cpp,
// cell_avx512.cpp include this header with their own `Traits`: the
// element type, the lanes V, the vector type and its fused multiply-add).
//
// Note [Recurrent panels]
// The recurrent product h_prev [B, K] @ W_hh^T is the whole cost of a
// step that is not the input projection, and W_hh is the same at every
// step. So W_hh is packed once per call into panels, one per block of V
// hidden units: panel u holds, for k = 0 .. K-1, the G gates' V weights of
// units u*V .. u*V+V-1 (G*V contiguous values per k; units past H are
// zero). A step then streams each panel once, keeps the G x R accumulators
// of R batch rows in registers, and applies the cell's nonlinearity to
// them right there (the gates i, f, g, o of the same units are in the same
// panel), writing only h (and c): the gates never go to memory. The blocks
// of units are independent, so threads split them, with one barrier per
// step (every thread reads all of h_prev). With one row (batch 1) a step
// is a matrix-vector product bound by streaming W_hh from L3: fp32 on
// AVX-512 packs it anyway (by 16 x 16 register transposes, cheap) and
// streams the panels with non-temporal prefetches, each step running the
// unit blocks in the reverse order of the previous one (its last panels
// are still in L2); the other variants read W_hh where it lies in the
// buffer, row by row (dot products of 4 rows at a time), nothing packed.
//
// Nonlinearities are vectorised: exp by range reduction (x = n ln2 + r,
// |r| <= ln2/2) and a Taylor polynomial (degree 7 for f32, 13 for f64:
// below an ulp or two), sigmoid(x) = 1 / (1 + exp(-x)) and tanh(x) =
// 1 - 2 / (1 + exp(2x)); NaN propagates.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/rnn/cell_step.h"

namespace bp::ops::rnn::cell {

template <class Traits>
struct Kernel {
  using T = typename Traits::T;
  using vec = typename Traits::vec;
  static constexpr int V = Traits::V;
  static constexpr int64_t kPrefetchK = 16;      // how far ahead (in k) the batch-1 loop prefetches the panel
  // The panel slice the row blocks share in cache (the traits' own where measured: AVX-512, 128 KiB).
  static constexpr int64_t kSliceBytes = [] {
    if constexpr (requires { Traits::slice_bytes; }) return int64_t{Traits::slice_bytes};
    else return int64_t{16 << 10};
  }();
  static constexpr int64_t kTailK = 96;          // how many k before the end of a product the epilogue prefetches

  static vec splat(T x) { return Traits::splat(x); }
  // One whole vector from p (unaligned). Not memcpy: GCC merged the G
  // memcpys of a panel row into one 16-byte copy loop through the stack,
  // whose 32-byte reload then missed store forwarding, a third of the
  // AVX2 step's time at batch 32.
  static vec loadu(const T* p) {
    typedef T unaligned_vec __attribute__((vector_size(sizeof(vec)), aligned(alignof(T)), may_alias));
    return *reinterpret_cast<const unaligned_vec*>(p);
  }
  static vec load(const T* p, int n) {
    vec v;
    if (n == V) {
      v = loadu(p);
    } else {
      v = splat(T(0));
      std::memcpy(&v, p, sizeof(T) * static_cast<size_t>(n));
    }
    return v;
  }
  static void storeu(T* p, vec v) {
    typedef T unaligned_vec __attribute__((vector_size(sizeof(vec)), aligned(alignof(T)), may_alias));
    *reinterpret_cast<unaligned_vec*>(p) = v;
  }
  static void store(T* p, vec v, int n) {
    if (n == V) storeu(p, v);
    else std::memcpy(p, &v, sizeof(T) * static_cast<size_t>(n));
  }

  // The cell's nonlinearities run on every gate of every step (5 per LSTM unit), so they are inlined into
  // the epilogue and, where the traits offer them, use the ISA's scale-by-2^n and reciprocal (AVX-512:
  // vscalefps, and vrcp14ps with a Newton step in place of a division, a third of its cost).
  [[gnu::always_inline]] static vec exp(vec x) {
    constexpr bool f32 = sizeof(T) == 4;
    const vec hi = splat(f32 ? T(88.3) : T(709.0)), lo = splat(f32 ? T(-87.3) : T(-708.0));
    x = x > hi ? hi : x;  // NaN compares false and passes through
    x = x < lo ? lo : x;
    // n = round(x / ln2) by the add-and-subtract trick (exact for |n| < 2^22).
    const vec shifter = splat(f32 ? T(12582912.0) : T(6755399441055744.0));
    const vec n = Traits::fma(x, splat(T(1.4426950408889634)), shifter) - shifter;
    const vec r = Traits::fma(n, splat(T(-1.4286068203094173e-06)), Traits::fma(n, splat(T(-0.693145751953125)), x));
    // e^r by its Taylor polynomial in Horner form (1/k! as constants: one FMA per degree).
    constexpr int degree = f32 ? 7 : 13;
    T inv_fact[degree + 1];
    inv_fact[0] = T(1);
    for (int k = 1; k <= degree; ++k) inv_fact[k] = inv_fact[k - 1] / T(k);
    vec p = splat(inv_fact[degree]);
    for (int k = degree - 1; k >= 0; --k) p = Traits::fma(p, r, splat(inv_fact[k]));
    if constexpr (requires { Traits::scale2(p, n); }) {
      return Traits::scale2(p, n);
    } else {
      // 2^n from the exponent bits.
      using ivec = typename Traits::ivec;
      const ivec bits = (__builtin_convertvector(n, ivec) + (f32 ? 127 : 1023)) << (f32 ? 23 : 52);
      vec scale;
      std::memcpy(&scale, &bits, sizeof(vec));
      return p * scale;
    }
  }
  // 1 / d for d >= 1 (finite).
  [[gnu::always_inline]] static vec recip(vec d) {
    if constexpr (requires { Traits::recip(d); }) return Traits::recip(d);
    else return splat(T(1)) / d;
  }
  [[gnu::always_inline]] static vec sigmoid(vec x) { return recip(splat(T(1)) + exp(-x)); }
  [[gnu::always_inline]] static vec tanh(vec x) {
    return Traits::fma(splat(T(-2)), recip(splat(T(1)) + exp(x + x)), splat(T(1)));
  }

  // acc[r][g] = sum_k a[r][k] * panel[k][g] for R rows of a (row stride lda).
  // acc[r][g] (+)= sum over k in [0, K) of a[r][k] * panel[k][g]; `a` and `panel` start at the range's first k.
  template <int G, int R>
  // Several rows also prefetch pf_lines cache lines from pf, one per k (the next k range's panel slice).
  static void product(const T* a, int64_t lda, const T* panel, int64_t K, vec (&acc)[R][G], const char* pf = nullptr,
                      int64_t pf_lines = 0) {
    if constexpr (R == 1) {
      // One row (batch 1): a second set of accumulators over odd k breaks the FMA latency chain.
      vec odd[G];
      for (int g = 0; g < G; ++g) odd[g] = splat(T(0));
      int64_t k = 0;
      for (; k + 1 < K; k += 2) {
        const vec x0 = splat(a[k]), x1 = splat(a[k + 1]);
        const T* w = panel + k * G * V;
        // Batch 1 streams W_hh once per step from L3: fetch a few k ahead, non-temporal (not kept in L2:
        // it would only evict the panels that the next step, running the blocks in reverse, reads first;
        // about 10% more bandwidth from L3 than prefetcht0 here).
        const char* ahead = reinterpret_cast<const char*>(w + kPrefetchK * G * V);
        for (size_t off = 0; off < 2 * G * sizeof(vec); off += 64) __builtin_prefetch(ahead + off, 0, 0);
        for (int g = 0; g < G; ++g) {
          const vec w0 = loadu(w + g * V), w1 = loadu(w + (G + g) * V);
          acc[0][g] = Traits::fma(x0, w0, acc[0][g]);
          odd[g] = Traits::fma(x1, w1, odd[g]);
        }
      }
      for (; k < K; ++k) {
        const vec x0 = splat(a[k]);
        for (int g = 0; g < G; ++g) {
          const vec w0 = loadu(panel + (k * G + g) * V);
          acc[0][g] = Traits::fma(x0, w0, acc[0][g]);
        }
      }
      for (int g = 0; g < G; ++g) acc[0][g] += odd[g];
    } else {
      for (int64_t k = 0; k < K; ++k) {
        if (k < pf_lines) __builtin_prefetch(pf + k * 64);
        vec w[G];
        for (int g = 0; g < G; ++g) w[g] = loadu(panel + (k * G + g) * V);
        for (int r = 0; r < R; ++r) {
          const vec x = splat(a[r * lda + k]);
          for (int g = 0; g < G; ++g) acc[r][g] = Traits::fma(x, w[g], acc[r][g]);
        }
      }
    }
  }

  // One block of R rows starting at row b0, units u*V .. u*V + n - 1, over k in [k0, k1): the
  // partial sums of earlier ranges come from (and, before the last range, go back to) `partial`
  // ([rows][G * V]); the last range ends in the epilogue.
  template <int G, int R>
  static void block(const StepArgs<T>& s, int64_t b0, int64_t u, int64_t k0, int64_t k1, T* partial,
                    const char* pf = nullptr, int64_t pf_lines = 0) {
    vec acc[R][G];
    if (k0 == 0) {
      start<G, R>(s, b0, u, acc);
    } else {
      for (int r = 0; r < R; ++r)
        for (int g = 0; g < G; ++g) acc[r][g] = loadu(partial + ((b0 + r) * G + g) * V);
    }
    // The epilogue's own lines are fetched into L1 shortly before the product ends (earlier, the panel
    // streaming through L1 would evict them again): the last kTailK values of k hide their latency.
    // (Several rows: each k is R times the work and the lines were prefetched into L2 a block ahead.)
    const int64_t tail = R == 1 ? kTailK : kTailK / 4;
    const int64_t mid = k1 == s.K && k1 - k0 > 2 * tail ? k1 - tail : k1;
    if (mid > k0)
      product<G, R>(s.a + b0 * s.lda + k0, s.lda, s.panel + (u * s.K + k0) * G * V, mid - k0, acc, pf, pf_lines);
    if (k1 > mid) {
      prefetch_rows(s, b0, R, u);
      product<G, R>(s.a + b0 * s.lda + mid, s.lda, s.panel + (u * s.K + mid) * G * V, k1 - mid, acc);
    }
    if (k1 < s.K) {
      for (int r = 0; r < R; ++r)
        for (int g = 0; g < G; ++g) storeu(partial + ((b0 + r) * G + g) * V, acc[r][g]);
      return;
    }
    finish<G, R>(s, b0, u, acc);
  }

  // Note [Input projection first]
  // The recurrent sums start from this step's input projection (and the folded bias) rather than from
  // zero, for every gate whose pre-activation is x + h (all but GRU's n gate, whose input part stays
  // outside r * (...)). The projections were written by the GEMM many steps earlier and are no longer in
  // L1: read at the end, in the epilogue, their latency stalled the cell's dependent chain (a tenth of
  // the epilogue-heavy steps: 40% of LSTM's epilogue time at batch 32, half of it at batch 1); read
  // here, the product's independent FMAs run while they arrive. (The sum's order changes: x + (h-terms)
  // instead of (h-terms) + x, a rounding of fp32's, no more.)
  static int folded_gates(const StepArgs<T>& s) {
    if (s.xw == nullptr || s.epilogue == Epilogue::store) return 0;
    return s.epilogue == Epilogue::gru ? 2 : s.gates;
  }
  // Row b's input projection of gate g, units j0 .. j0 + n - 1, plus the folded input bias (if any).
  [[gnu::always_inline]] static vec x_in(const StepArgs<T>& s, int64_t b, int64_t j0, int n, int g) {
    const vec v = load(s.xw + b * s.xw_ld + g * s.units + j0, n);
    return s.x_bias == nullptr ? v : v + load(s.x_bias + g * s.units + j0, n);
  }
  // The accumulators of rows b0 .. b0 + R - 1, unit block u, before the first k (Note [Input projection first]).
  template <int G, int R>
  [[gnu::always_inline]] static void start(const StepArgs<T>& s, int64_t b0, int64_t u, vec (&acc)[R][G]) {
    const int folded = folded_gates(s);
    const int64_t j0 = u * V;
    const int n = static_cast<int>(s.units - j0 < V ? s.units - j0 : V);
    for (int r = 0; r < R; ++r)
      for (int g = 0; g < G; ++g) acc[r][g] = g < folded ? x_in(s, b0 + r, j0, n, g) : splat(T(0));
  }

  // The epilogue of R rows from row b0, units u*V ..: the cell applied to the recurrent products `acc`,
  // which already hold the input projections of the gates `start` folded in.
  template <int G, int R>
  static void finish(const StepArgs<T>& s, int64_t b0, int64_t u, vec (&acc)[R][G]) {
    const int64_t j0 = u * V;
    const int n = static_cast<int>(s.units - j0 < V ? s.units - j0 : V);
    for (int r = 0; r < R; ++r) {
      const int64_t b = b0 + r;
      const bool active = s.active == nullptr || s.active[b] != 0;
      T* out = s.out + b * s.out_ld + j0;
      if (!active) {
        if (s.keep != nullptr) std::memcpy(out, s.keep + b * s.keep_ld + j0, sizeof(T) * static_cast<size_t>(n));
        continue;
      }
      const int64_t H = s.units;
      switch (s.epilogue) {
        case Epilogue::store: store(out, acc[r][0], n); break;
        case Epilogue::tanh: store(out, tanh(acc[r][0]), n); break;
        case Epilogue::relu: {
          const vec v = acc[r][0];
          store(out, v > splat(T(0)) ? v : (v != v ? v : splat(T(0))), n);
          break;
        }
        case Epilogue::lstm: {
          if constexpr (G == 4) {
            const vec i = sigmoid(acc[r][0]);
            const vec f = sigmoid(acc[r][1]);
            const vec g = tanh(acc[r][2]);
            const vec o = sigmoid(acc[r][3]);
            T* c = s.c + b * s.c_ld + j0;
            const vec c1 = Traits::fma(f, load(c, n), i * g);
            store(c, c1, n);
            store(out, o * tanh(c1), n);
          }
          break;
        }
        case Epilogue::gru: {
          if constexpr (G == 3) {
            const vec hr = acc[r][0] + load(s.b_hh + j0, n), hz = acc[r][1] + load(s.b_hh + H + j0, n);
            const vec hn = acc[r][2] + load(s.b_hh + 2 * H + j0, n);
            const vec rg = sigmoid(hr);  // acc[r][0] and [1] hold x_r and x_z too
            const vec z = sigmoid(hz);
            const vec nn = tanh(Traits::fma(rg, hn, x_in(s, b, j0, n, 2)));
            const vec hp = load(s.keep + b * s.keep_ld + j0, n);
            store(out, Traits::fma(z, hp - nn, nn), n);
          }
          break;
        }
      }
    }
  }

  // The rows in blocks of at most R, balanced (32 rows with R = 6: 6, 6, 5, 5, 5, 5) so that no block is
  // a small remainder with few accumulators per panel load. With several blocks, k goes in ranges whose
  // slice of the panel (kSliceBytes) stays in cache while every block uses it (Note [Recurrent panels]).
  // The epilogue reads this step's input projections (and LSTM's c) of its unit block: B * G lines written
  // by the projection GEMM many steps earlier, so no longer in L1 / L2 (at batch 32 half of the epilogue's
  // time was spent waiting for them). So while the products of block u run, the lines of the block this
  // thread runs next are prefetched, a few per call: call i of n does its share of them.
  static void prefetch_epilogue(const StepArgs<T>& s, int64_t u, int64_t i, int64_t n) {
    const int64_t next = u + 1 < s.u1 ? u + 1 : s.next_unit;  // the caller's order may run backwards
    if (s.xw == nullptr || next < 0 || next * V >= s.units) return;
    const int64_t j0 = next * V;
    const int per_row = s.gates + (s.c != nullptr ? 1 : 0);
    const int64_t lines = s.rows * per_row, from = lines * i / n, to = lines * (i + 1) / n;
    for (int64_t l = from; l < to; ++l) {
      const int64_t b = l / per_row, g = l % per_row;
      const T* p = g < s.gates ? s.xw + b * s.xw_ld + g * s.units + j0 : s.c + b * s.c_ld + j0;
      // Into L2 only: the rows lie a power of two apart (G * H floats), so in L1 they would share a few
      // sets and evict each other before the epilogue reads them.
      __builtin_prefetch(p, 0, 2);
      __builtin_prefetch(p + V - 1, 0, 2);  // the block may straddle two lines
    }
  }

  // The lines the epilogue of rows b0 .. b0 + R - 1, unit block u, reads: the input projections `start`
  // did not fold in (GRU's n gate) and c.
  static void prefetch_rows(const StepArgs<T>& s, int64_t b0, int R, int64_t u) {
    if (s.xw == nullptr) return;
    const int64_t j0 = u * V;
    const int folded = folded_gates(s);
    for (int r = 0; r < R; ++r) {
      const T* x = s.xw + (b0 + r) * s.xw_ld + j0;
      for (int g = folded; g < s.gates; ++g) {
        __builtin_prefetch(x + g * s.units);
        __builtin_prefetch(x + g * s.units + V - 1);
      }
      if (s.c != nullptr) __builtin_prefetch(s.c + (b0 + r) * s.c_ld + j0);
    }
  }

  template <int G, int R>
  static void rows_of(const StepArgs<T>& s, int64_t u) {
    const int64_t blocks = (s.rows + R - 1) / R;
    const int64_t base = s.rows / blocks, extra = s.rows % blocks;
    const int64_t chunk = blocks == 1 ? s.K : std::max<int64_t>(16, kSliceBytes / (G * V * int64_t(sizeof(T))));
    thread_local std::vector<T> partial;
    if (chunk < s.K && partial.size() < static_cast<size_t>(s.rows * G * V)) partial.resize(static_cast<size_t>(s.rows * G * V));
    const int64_t calls = blocks * ((s.K + chunk - 1) / chunk);
    int64_t call = 0;
    for (int64_t k0 = 0; k0 < s.K; k0 += chunk) {
      const int64_t k1 = std::min(s.K, k0 + chunk);
      int64_t b = 0;
      for (int64_t i = 0; i < blocks; ++i) {
        prefetch_epilogue(s, u, call++, calls);
        const int64_t r = base + (i < extra ? 1 : 0);
        // Row block i of `blocks` fetches its share of the next k range's panel slice (it follows this one
        // in the panel), so that the first block of that range does not wait on L3 for every line.
        const int64_t next_lines = k1 < s.K ? (std::min(s.K, k1 + chunk) - k1) * G * V * int64_t(sizeof(T)) / 64 : 0;
        const int64_t pf_from = next_lines * i / blocks, pf_lines = next_lines * (i + 1) / blocks - pf_from;
        const char* pf = reinterpret_cast<const char*>(s.panel + (u * s.K + k1) * G * V) + pf_from * 64;
        T* part = partial.data();
        switch (r) {
          case 1: block<G, 1>(s, b, u, k0, k1, part, pf, pf_lines); break;
          case 2: if constexpr (R >= 2) block<G, 2>(s, b, u, k0, k1, part, pf, pf_lines); break;
          case 3: if constexpr (R >= 3) block<G, 3>(s, b, u, k0, k1, part, pf, pf_lines); break;
          case 4: if constexpr (R >= 4) block<G, 4>(s, b, u, k0, k1, part, pf, pf_lines); break;
          case 5: if constexpr (R >= 5) block<G, 5>(s, b, u, k0, k1, part, pf, pf_lines); break;
          case 6: if constexpr (R >= 6) block<G, 6>(s, b, u, k0, k1, part, pf, pf_lines); break;
          case 7: if constexpr (R >= 7) block<G, 7>(s, b, u, k0, k1, part, pf, pf_lines); break;
          default: if constexpr (R >= 8) block<G, 8>(s, b, u, k0, k1, part, pf, pf_lines); break;
        }
        b += r;
      }
    }
  }

  // sum_k w[k] * x[k] for four rows w0..w3 at once (two accumulators each over k).
  static void dot4(const T* w0, const T* w1, const T* w2, const T* w3, const T* x, int64_t K, T* out) {
    vec acc[4] = {splat(T(0)), splat(T(0)), splat(T(0)), splat(T(0))};
    const T* rows[4] = {w0, w1, w2, w3};
    int64_t k = 0;
    for (; k + V <= K; k += V) {
      const vec xv = loadu(x + k);
      for (int r = 0; r < 4; ++r) {
        const vec wv = loadu(rows[r] + k);
        acc[r] = Traits::fma(wv, xv, acc[r]);
      }
    }
    for (int r = 0; r < 4; ++r) {
      T sum = T(0);
      for (int i = 0; i < V; ++i) sum += acc[r][i];
      for (int64_t kk = k; kk < K; ++kk) sum += rows[r][kk] * x[kk];
      out[r] = sum;
    }
  }

  // Batch 1 (Note [Recurrent panels]): the product of a unit block is G * V row dot products on W as it
  // lies in the buffer (PyTorch's [G * units, K] rows, streamed in order, nothing packed), gathered into
  // the accumulator layout of `block` (after the input projections, as `start` sets them), whose epilogue
  // then runs as for the panels.
  template <int G>
  static void unit_block_by_rows(const StepArgs<T>& s, int64_t u, T* sums) {
    const int64_t j0 = u * V;
    const int n = static_cast<int>(s.units - j0 < V ? s.units - j0 : V);
    for (int g = 0; g < G; ++g) {
      T* out = sums + g * V;
      const T* base = s.w_rows + (g * s.units + j0) * s.K;
      int v = 0;
      for (; v + 4 <= n; v += 4)
        dot4(base + v * s.K, base + (v + 1) * s.K, base + (v + 2) * s.K, base + (v + 3) * s.K, s.a, s.K, out + v);
      for (; v < n; ++v) {
        T tail[4];
        dot4(base + v * s.K, base + v * s.K, base + v * s.K, base + v * s.K, s.a, s.K, tail);
        out[v] = tail[0];
      }
      for (; v < V; ++v) out[v] = T(0);
    }
    vec acc[1][G];
    start<G, 1>(s, 0, u, acc);
    for (int g = 0; g < G; ++g) acc[0][g] += loadu(sums + g * V);
    finish<G, 1>(s, 0, u, acc);
  }

  static void step(const StepArgs<T>& s) {
    if (s.w_rows != nullptr) {
      T sums[4 * V];
      for (int64_t u = s.u0; u < s.u1; ++u) {
        switch (s.gates) {
          case 4: unit_block_by_rows<4>(s, u, sums); break;
          case 3: unit_block_by_rows<3>(s, u, sums); break;
          default: unit_block_by_rows<1>(s, u, sums); break;
        }
      }
      return;
    }
    for (int64_t u = s.u0; u < s.u1; ++u) {
      switch (s.gates) {
        case 4: rows_of<4, Traits::rows4>(s, u); break;
        case 3: rows_of<3, Traits::rows3>(s, u); break;
        default: rows_of<1, Traits::rows1>(s, u); break;
      }
    }
  }

  // Note [Recurrent panels]: w is [G * units, K] row-major.
  static void pack(const T* w, int gates, int64_t units, int64_t K, T* panel) {
    const int64_t blocks = (units + V - 1) / V;
    if constexpr (requires(vec (&r)[V]) { Traits::transpose16(r); }) {
      // V x V tiles transposed in registers: rows read and panel vectors written whole (the element loop
      // below gathers with a stride of K, and cost a tenth of a batch-1 call).
      for (int64_t u = 0; u < blocks; ++u)
        for (int g = 0; g < gates; ++g)
          for (int64_t k0 = 0; k0 < K; k0 += V) {
            const int nk = static_cast<int>(K - k0 < V ? K - k0 : V);
            vec r[V];
            for (int v = 0; v < V; ++v) {
              const int64_t j = u * V + v;
              r[v] = j < units ? load(w + (g * units + j) * K + k0, nk) : splat(T(0));
            }
            Traits::transpose16(r);
            for (int i = 0; i < nk; ++i) storeu(panel + ((u * K + k0 + i) * gates + g) * V, r[i]);
          }
      return;
    }
    for (int64_t u = 0; u < blocks; ++u)
      for (int64_t k = 0; k < K; ++k)
        for (int g = 0; g < gates; ++g)
          for (int v = 0; v < V; ++v) {
            const int64_t j = u * V + v;
            panel[((u * K + k) * gates + g) * V + v] = j < units ? w[(g * units + j) * K + k] : T(0);
          }
  }
};

}  // namespace bp::ops::rnn::cell
