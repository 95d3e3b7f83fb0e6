#pragma once
// Winograd F(4x4, 3x3) (conv_winograd.h), written once over a vector type
// and instantiated by each ISA's file, which supplies `Ops` as the direct
// kernels do (R with L lanes, zero, load, store, set1) and the GEMM variant
// of its ISA. R supports +, - and * (GCC vector types; a struct with
// operators for the generic variant).
//
// Layouts: channels are padded to Cp, Kp (multiples of L) with zeros, so the
// transforms always work on whole vectors:
//   U [36][Cp][Kp]   transformed weight, element (xi, nu) of G g G^T
//   V [36][TB][Cp]   transformed input tiles of the current block
//   M [36][TB][Kp]   V_e U_e for each of the 36 elements

#include <algorithm>
#include <cstring>

#include "backplane/tensor.h"
#include "core/threads.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/scratch.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace bp::kernels::cpu::detail {

// B^T v for a 6-vector (the input transform along one axis).
template <class R, class Set1>
inline void winograd_bt(const R* d, R* o, Set1 c) {
  const R four = c(4.0f), five = c(5.0f), two = c(2.0f);
  o[0] = four * d[0] - five * d[2] + d[4];
  o[1] = d[3] + d[4] - four * (d[1] + d[2]);
  o[2] = four * (d[1] - d[2]) + d[4] - d[3];
  o[3] = two * (d[3] - d[1]) + d[4] - d[2];
  o[4] = two * (d[1] - d[3]) + d[4] - d[2];
  o[5] = four * d[1] - five * d[3] + d[5];
}

// A^T v: 6 transformed values back to 4 outputs.
template <class R, class Set1>
inline void winograd_at(const R* m, R* o, Set1 c) {
  const R a = m[1] + m[2], b = m[1] - m[2], p = m[3] + m[4], q = m[3] - m[4];
  o[0] = m[0] + a + p;
  o[1] = b + c(2.0f) * q;
  o[2] = a + c(4.0f) * p;
  o[3] = b + c(8.0f) * q + m[5];
}

// G v for a 3-vector (the weight transform along one axis).
template <class R, class Set1>
inline void winograd_g(const R* g, R* o, Set1 c) {
  const R sixth = c(1.0f / 6.0f), s = g[0] + g[2];
  const R q = c(0.25f) * g[0], t = c(1.0f / 24.0f) * g[0] + c(1.0f / 6.0f) * g[2], h = c(1.0f / 12.0f) * g[1];
  o[0] = q;
  o[1] = c(0.0f) - sixth * (s + g[1]);
  o[2] = sixth * (g[1] - s);
  o[3] = t + h;
  o[4] = t - h;
  o[5] = g[2];
}

// U_e[c][k] for the kw output channels of one input channel c (kw a
// multiple of L), from its taps laid out as rows[tap * stride + k]: vectors
// of L output channels, written to the 36 U_e ([36][Cp][kw]) as sequential
// streams.
template <class Ops>
void transform_weight_rows(const float* rows, int64_t stride, int64_t kw, int64_t cp, int64_t c, float* u) {
  using R = typename Ops::R;
  constexpr int L = Ops::L;
  for (int64_t k0 = 0; k0 < kw; k0 += L) {
    R g[3][3], col[3], res[6], t6[6][3];
    for (int t = 0; t < 9; ++t) g[t / 3][t % 3] = Ops::load(rows + t * stride + k0);
    for (int j = 0; j < 3; ++j) {  // G g: one column at a time
      for (int i = 0; i < 3; ++i) col[i] = g[i][j];
      winograd_g(col, res, Ops::set1);
      for (int i = 0; i < 6; ++i) t6[i][j] = res[i];
    }
    for (int i = 0; i < 6; ++i) {  // (G g) G^T: one row at a time
      winograd_g(t6[i], res, Ops::set1);
      for (int j = 0; j < 6; ++j) Ops::store(u + ((i * 6 + j) * cp + c) * kw + k0, res[j]);
    }
  }
}

// The weight [K][C][3][3] as wt[(c * 9 + tap) * stride + k], output
// channels K..Kp zero: a transpose of the K x 9C matrix, in kBlock x kBlock
// blocks so the reads (kBlock weight rows, each in order) and the writes
// (kBlock rows of wt) all stay in L1. Gathering one input channel's taps
// from every output channel's row instead jumped 9C floats per read; at
// C = 512 those rows fell into two L1 sets, and that walk took 90 % of the
// transform. For the same reason wt's rows are winograd_tap_stride(Kp)
// apart, one cache line more than Kp floats: rows Kp = 512 floats apart
// would map to the same L1 sets, for these writes and the transform's reads.
inline int64_t winograd_tap_stride(int64_t kp) { return kp + 16; }

inline void winograd_weight_taps(const ConvShape& s, const float* w, int64_t kp, float* wt) {
  constexpr int64_t kBlock = 16;
  const int64_t J = 9 * s.c, K = s.k, stride = winograd_tap_stride(kp);
  const int64_t blocks = (J + kBlock - 1) / kBlock;
  const int team = threads::team_size(blocks);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t j0 = b * kBlock, j1 = std::min(J, j0 + kBlock);
    for (int64_t k0 = 0; k0 < kp; k0 += kBlock)
      for (int64_t k = k0; k < k0 + kBlock && k < kp; ++k) {
        if (k >= K) {
          for (int64_t j = j0; j < j1; ++j) wt[j * stride + k] = 0.0f;
          continue;
        }
        const float* row = w + k * J;
        for (int64_t j = j0; j < j1; ++j) wt[j * stride + k] = row[j];
      }
  }
}

// U = G g G^T for every c and the output channels [k_begin, k_end) (a
// multiple of L wide, within Kp), zero-padded, as [36][Cp][k_end - k_begin],
// from the weight's taps as winograd_weight_taps lays them out.
template <class Ops>
void winograd_weights(const ConvShape& s, const float* wt, int64_t cp, int64_t kp, int64_t k_begin, int64_t k_end,
                      float* u) {
  const int64_t C = s.c, kw = k_end - k_begin, stride = winograd_tap_stride(kp);
  const int team = threads::team_size(C);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t c = 0; c < cp; ++c) {
    if (c >= C) {  // padding rows of every U_e
      for (int e = 0; e < 36; ++e) std::fill_n(u + (e * cp + c) * kw, kw, 0.0f);
      continue;
    }
    transform_weight_rows<Ops>(wt + c * 9 * stride + k_begin, stride, kw, cp, c, u);
  }
}

template <class Ops>
struct Winograd {
  using R = typename Ops::R;
  static constexpr int L = Ops::L;

  const ConvShape& s;
  const float* x;
  const float* bias;
  float* out;
  int64_t cp, kp, th, tw, tiles;

  static R splat(float v) { return Ops::set1(v); }

  // One tile's input transform into V (block slot t; V_e is `es` floats
  // after V_{e-1}).
  void input_tile(int64_t tile, int64_t t, int64_t es, float* v) const {
    const int64_t n = tile / (th * tw), ty = (tile / tw) % th, tx = tile % tw;
    const int64_t y0 = ty * 4 - s.pad[1], x0 = tx * 4 - s.pad[2];
    const int64_t H = s.in[1], W = s.in[2], C = s.c;
    const bool inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= H && x0 + 6 <= W;
    const float* image = x + n * H * W * C;
    alignas(64) float tail[L];
    for (int64_t c0 = 0; c0 < cp; c0 += L) {
      const bool whole = c0 + L <= C;
      R d[6][6];
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          const int64_t y = y0 + i, xx = x0 + j;
          if (!inside && (y < 0 || y >= H || xx < 0 || xx >= W)) {
            d[i][j] = Ops::zero();
            continue;
          }
          const float* px = image + (y * W + xx) * C + c0;
          if (whole) {
            d[i][j] = Ops::load(px);
          } else {
            for (int l = 0; l < L; ++l) tail[l] = c0 + l < C ? px[l] : 0.0f;
            d[i][j] = Ops::load(tail);
          }
        }
      R col[6], res[6], t6[6][6];
      for (int j = 0; j < 6; ++j) {
        for (int i = 0; i < 6; ++i) col[i] = d[i][j];
        winograd_bt(col, res, splat);
        for (int i = 0; i < 6; ++i) t6[i][j] = res[i];
      }
      for (int i = 0; i < 6; ++i) {
        winograd_bt(t6[i], res, splat);
        for (int j = 0; j < 6; ++j) Ops::store(v + (i * 6 + j) * es + t * cp + c0, res[j]);
      }
    }
  }

  // One tile's output transform from M (block slot t; M_e `es` floats after
  // M_{e-1}), plus bias, into out.
  void output_tile(int64_t tile, int64_t t, int64_t es, const float* m) const {
    const int64_t n = tile / (th * tw), ty = (tile / tw) % th, tx = tile % tw;
    const int64_t OH = s.out[1], OW = s.out[2], K = s.k;
    const int64_t rows = std::min<int64_t>(4, OH - ty * 4), cols = std::min<int64_t>(4, OW - tx * 4);
    float* base = out + ((n * OH + ty * 4) * OW + tx * 4) * K;
    alignas(64) float buffer[L];
    for (int64_t k0 = 0; k0 < kp; k0 += L) {
      R mm[6][6];
      for (int e = 0; e < 36; ++e) mm[e / 6][e % 6] = Ops::load(m + e * es + t * kp + k0);
      R col[6], res[4], t4[4][6];
      for (int j = 0; j < 6; ++j) {
        for (int i = 0; i < 6; ++i) col[i] = mm[i][j];
        winograd_at(col, res, splat);
        for (int i = 0; i < 4; ++i) t4[i][j] = res[i];
      }
      R b0 = Ops::zero();
      const int64_t valid = std::min<int64_t>(L, K - k0);
      if (bias) {
        for (int l = 0; l < L; ++l) buffer[l] = l < valid ? bias[k0 + l] : 0.0f;
        b0 = Ops::load(buffer);
      }
      for (int i = 0; i < rows; ++i) {
        winograd_at(t4[i], res, splat);
        for (int j = 0; j < cols; ++j) {
          float* dst = base + (i * OW + j) * K + k0;
          const R y = res[j] + b0;
          if (valid == L) {
            Ops::store(dst, y);
          } else {
            Ops::store(buffer, y);
            std::memcpy(dst, buffer, sizeof(float) * static_cast<std::size_t>(valid));
          }
        }
      }
    }
  }
};

// Note [Winograd weight blocks]
// U holds 36 x Cp x Kp floats: 37.7 MB at 512 x 512 channels, more than the
// caches, so transforming it whole and then running the 36 GEMMs wrote it to
// memory and read it back, and at ResNet-50's 7 x 7 layers (32 tiles at
// batch 8) that traffic cost more than the GEMMs (the transform was 26 % of
// a call's time, the GEMMs 14 %). When U is larger than kWholeWeightBytes
// and the tiles fit one block, the output channels go kBlockWeightBytes of U
// at a time instead: transform that block of U, run the 36 GEMMs on its
// columns of M while it is still in cache, move on. The transform does the
// same arithmetic either way; with several tile blocks U stays whole (it is
// reused by every block).
inline constexpr int64_t kWholeWeightBytes = int64_t{4} << 20;
inline constexpr int64_t kBlockWeightBytes = int64_t{8} << 20;

// Note [Winograd thread blocks]
// The tiles go through input transform, 36 GEMMs and output transform a
// block at a time. With one block for all threads (as large as ~8 MiB of V
// and M, the GEMMs shared out), V and M lived in L3 and the transforms,
// which read and write them in 36 streams, took 43 % of the time on
// ResNet-50's 64-channel 56 x 56 layer at batch 8 (perf). Where the tiles'
// V and M exceed kThreadBlocksMinBytes, each thread now takes blocks of its
// own of about kThreadBlockBytes (at least kThreadBlockMinTiles tiles, so
// the GEMMs keep their register tiles busy) through all three steps in its
// L2, with no barrier between them. On ResNet-50's batch-8 layers (one and
// two threads, interleaved A/B) that was 1.15-1.5x at 64 and 128 channels
// (f32 and bf16) and 1.15-1.36x at 256 in f32 (bf16 0.96-1.09, noise);
// 1.13-1.5x at 64 channels on 112 x 112, batch 1. Every block reads all of
// U, which is cheap while U stays in L3 (kThreadBlocksMaxWeightBytes);
// below kThreadBlocksMinBytes the shared block already fits the caches and
// was 5-10 % faster (1 x 28 x 28 at 128 channels, 1 x 56 x 56 at 64).
// Each element's matrix of V and M starts kElementPad floats past the end
// of the previous one, so that the transforms' 36 streams (one vector per
// element and tile) do not all fall into one L1 set when a matrix is a
// multiple of 4 KiB (alone it measured within the noise).
inline constexpr int64_t kThreadBlockBytes = int64_t{512} << 10;
inline constexpr int64_t kThreadBlockMinTiles = 16;
inline constexpr int64_t kThreadBlocksMinBytes = int64_t{4} << 20;
inline constexpr int64_t kThreadBlocksMaxWeightBytes = int64_t{16} << 20;
inline constexpr int64_t kElementPad = 16;

// Channels padded to whole vectors of Ops (Cp, Kp).
template <class Ops>
int64_t padded_channels(int64_t channels) {
  return (channels + Ops::L - 1) / Ops::L * Ops::L;
}

// The floats of the whole U, [36][Cp][Kp] (winograd_weight_floats).
template <class Ops>
int64_t winograd_weight_size(const ConvShape& s) {
  return 36 * padded_channels<Ops>(s.c) * padded_channels<Ops>(s.k);
}

// The whole U of w, for a caller that keeps it across calls
// (winograd_transform_weight_f32).
template <class Ops>
void winograd_transform_weight(const ConvShape& s, const float* w, float* u) {
  const int64_t cp = padded_channels<Ops>(s.c), kp = padded_channels<Ops>(s.k);
  float* wt = scratch(ScratchSlot::winograd_weights, static_cast<std::size_t>(9 * s.c * winograd_tap_stride(kp)));
  winograd_weight_taps(s, w, kp, wt);
  winograd_weights<Ops>(s, wt, cp, kp, 0, kp, u);
}

// Inside the parallel regions below each GEMM runs on one thread.
inline void one_thread_per_gemm() {
  threads::apply_num_threads_to_this_thread();
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
}

// One block of tiles [t0, t0 + tb) from input to output on the calling
// thread: V and M of the block (in v and m, each element's matrix
// kElementPad floats past the previous one's end) stay in its cache.
template <class Ops>
void winograd_block(GemmIsa gemm_isa, const Winograd<Ops>& wg, const float* u, int64_t t0, int64_t tb, float* v,
                    float* m) {
  const int64_t cp = wg.cp, kp = wg.kp;
  const int64_t ves = tb * cp + kElementPad, mes = tb * kp + kElementPad;
  for (int64_t t = 0; t < tb; ++t) wg.input_tile(t0 + t, t, ves, v);
  for (int e = 0; e < 36; ++e)
    gemm_f32(gemm_isa, {v + e * ves, tb, cp, cp, 1}, {u + e * cp * kp, cp, kp, kp, 1}, {m + e * mes, tb, kp, kp, 1},
             1.0f, 0.0f);
  for (int64_t t = 0; t < tb; ++t) wg.output_tile(t0 + t, t, mes, m);
}

template <class Ops>
void winograd_f4x3(GemmIsa gemm_isa, const ConvShape& s, const float* x, const float* w, const float* bias,
                   float* out, const float* u_ready) {
  constexpr int L = Ops::L;
  const int64_t cp = padded_channels<Ops>(s.c), kp = padded_channels<Ops>(s.k);
  const int64_t th = (s.out[1] + 3) / 4, tw = (s.out[2] + 3) / 4, tiles = s.n * th * tw;
  const int64_t per_tile = 36 * (cp + kp) * static_cast<int64_t>(sizeof(float));
  const int64_t u_bytes = 36 * cp * kp * static_cast<int64_t>(sizeof(float));
  // Note [Winograd thread blocks]: a block per thread at a time, or ...
  const bool per_thread = u_bytes <= kThreadBlocksMaxWeightBytes && tiles * per_tile > kThreadBlocksMinBytes;
  // ... a block of tiles for all threads: V and M of a block take at most
  // ~8 MiB (L3), and at least 32 tiles, so the GEMMs have rows enough for
  // their register tiles.
  const int64_t tb_max =
      per_thread ? 0 : std::min<int64_t>(tiles, std::max<int64_t>(32, (int64_t{8} << 20) / per_tile) / 8 * 8);
  // Output channels per weight block (Note [Winograd weight blocks]): all of
  // them, or as many whole vectors as kBlockWeightBytes of U holds.
  // A ready U (Note [Winograd weight cache]) is used whole.
  const int64_t u_row_bytes = 36 * cp * static_cast<int64_t>(sizeof(float));
  const bool blocked = !per_thread && u_ready == nullptr && tiles <= tb_max && u_row_bytes * kp > kWholeWeightBytes;
  const int64_t kb = blocked ? std::clamp<int64_t>(kBlockWeightBytes / u_row_bytes / L * L, L, kp) : kp;
  // Scratch reused across calls (Note [Kernel scratch]): U's block and,
  // after it, the weight's taps as the transform reads them.
  float* u_own = nullptr;
  float* wt = nullptr;
  if (u_ready == nullptr) {
    u_own = scratch(ScratchSlot::winograd_weights, static_cast<std::size_t>(36 * cp * kb + 9 * s.c * winograd_tap_stride(kp)));
    wt = u_own + 36 * cp * kb;
    winograd_weight_taps(s, w, kp, wt);
    if (!blocked) winograd_weights<Ops>(s, wt, cp, kp, 0, kp, u_own);
  }
  const float* u = u_ready != nullptr ? u_ready : u_own;
  const Winograd<Ops> wg{s, x, bias, out, cp, kp, th, tw, tiles};
  if (per_thread) {
    // Blocks of about kThreadBlockBytes shared out evenly: as many per
    // thread, as many tiles per block.
    const int64_t tb_thread = std::max<int64_t>(kThreadBlockMinTiles, kThreadBlockBytes / per_tile);
    const int64_t blocks_by_size = (tiles + tb_thread - 1) / tb_thread;
    const int thread_team = threads::team_size(blocks_by_size);
    const int64_t thread_blocks = (blocks_by_size + thread_team - 1) / thread_team * thread_team;
    const int64_t tb = (tiles + thread_blocks - 1) / thread_blocks;
#pragma omp parallel num_threads(thread_team) if (thread_team > 1)
    {
      one_thread_per_gemm();
      float* v = scratch(ScratchSlot::winograd_input, static_cast<std::size_t>(36 * (tb * cp + kElementPad)));
      float* m = scratch(ScratchSlot::winograd_output, static_cast<std::size_t>(36 * (tb * kp + kElementPad)));
#pragma omp for schedule(static)
      for (int64_t b = 0; b < thread_blocks; ++b) {
        const int64_t t0 = b * tb;
        if (t0 < tiles) winograd_block(gemm_isa, wg, u, t0, std::min(tb, tiles - t0), v, m);
      }
    }
    return;
  }
  float* v = scratch(ScratchSlot::winograd_input, static_cast<std::size_t>(36 * (tb_max * cp + kElementPad)));
  float* m = scratch(ScratchSlot::winograd_output, static_cast<std::size_t>(36 * (tb_max * kp + kElementPad)));
  const int team = threads::team_size(36);
  for (int64_t t0 = 0; t0 < tiles; t0 += tb_max) {
    const int64_t tb = std::min<int64_t>(tb_max, tiles - t0);
    const int64_t ves = tb * cp + kElementPad, mes = tb * kp + kElementPad;
#pragma omp parallel num_threads(team) if (team > 1)
    {
      one_thread_per_gemm();
#pragma omp for schedule(static)
      for (int64_t t = 0; t < tb; ++t) wg.input_tile(t0 + t, t, ves, v);
    }
    // One weight block (all of U unless blocked) at a time: M_e[:, k0 : k1]
    // = V_e U_e for the 36 elements, U holding those `width` columns.
    for (int64_t k0 = 0; k0 < kp; k0 += kb) {
      const int64_t width = std::min(kp, k0 + kb) - k0;
      if (blocked) winograd_weights<Ops>(s, wt, cp, kp, k0, k0 + width, u_own);
#pragma omp parallel num_threads(team) if (team > 1)
      {
        one_thread_per_gemm();
#pragma omp for schedule(dynamic, 1)
        for (int e = 0; e < 36; ++e)
          gemm_f32(gemm_isa, {v + e * ves, tb, cp, cp, 1}, {u + e * cp * width, cp, width, width, 1},
                   {m + e * mes + k0, tb, width, kp, 1}, 1.0f, 0.0f);
      }
    }
#pragma omp parallel num_threads(team) if (team > 1)
    {
      one_thread_per_gemm();
#pragma omp for schedule(static)
      for (int64_t t = 0; t < tb; ++t) wg.output_tile(t0 + t, t, mes, m);
    }
  }
}

}  // namespace bp::kernels::cpu::detail

// A variant's entry points (conv_winograd.h), for the ISA file that
// includes this header with its vector type OPS and GEMM kernels GEMM_ISA.
#define BP_WINOGRAD_VARIANT(NAME, OPS, GEMM_ISA)                                                        \
  namespace bp::kernels::cpu::detail {                                                                 \
  void winograd_f4x3_f32_##NAME(const ConvShape& s, const float* x, const float* w, const float* bias, \
                                float* out, const float* u_ready) {                                    \
    winograd_f4x3<OPS>(GemmIsa::GEMM_ISA, s, x, w, bias, out, u_ready);                                \
  }                                                                                                    \
  void winograd_transform_weight_f32_##NAME(const ConvShape& s, const float* w, float* u) {            \
    winograd_transform_weight<OPS>(s, w, u);                                                           \
  }                                                                                                    \
  int64_t winograd_weight_floats_##NAME(const ConvShape& s) { return winograd_weight_size<OPS>(s); }   \
  }
