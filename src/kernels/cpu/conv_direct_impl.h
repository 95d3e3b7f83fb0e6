#pragma once
// The direct convolution loops, written once over a vector type and
// instantiated by each ISA's file (conv_direct_<isa>.cpp), which supplies
// `Ops`: the register type R with L fp32 lanes, zero(), load(p), store(p, v)
// (unaligned), set1(x) and fma(a, b, c) = a * b + c.
//
// Note [Direct convolution blocking]
// Data is channels-last: x[n][d][h][w][c], out[n][od][oh][ow][k].
// - Depthwise (groups == c == k): out[.., c] = sum over taps of x[.., c] *
//   w[c, tap]. Vectors run along c; a block of OWB output points keeps its
//   OWB accumulators in registers across every tap, and each weight vector
//   load serves OWB fused multiply-adds.
//   Blocks whose taps all lie inside the input (the interior, along W) load
//   straight; border and short blocks point each out-of-range tap at a
//   vector of zeros; rows (D, H) outside the input are skipped.
// - General: out[.., g*kg + j] = sum over taps and ci of x[.., g*cg + ci] *
//   w[g*kg + j, ci, tap]. The weight is packed as [g][j block][tap][ci][JB*L]
//   (zero-padded past kg), so the innermost loop (over ci) reads JB weight
//   vectors in sequence; OWB output points share them, each broadcasting its
//   input value: OWB * JB accumulators, JB + OWB loads per OWB * JB FMAs.
//   The input's zero padding is written out first (one pass, small next to
//   the arithmetic), so every tap of every point is inside it, each point of
//   a block keeps its own input pointer, and a block of points may span
//   output rows: small images (7 x 7) fill whole blocks too.
// One thread computes each output, summing taps then channels in a fixed
// order, so results are independent of the thread count.

#include <algorithm>
#include <type_traits>
#include <cstring>
#include <vector>

#include "backplane/dtype.h"

#include "backplane/tensor.h"
#include "core/threads.h"
#include "kernels/cpu/conv_direct.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/scratch.h"

namespace bp::kernels::cpu::detail {

inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The number of vectors (of L lanes, at most `most`) per block of output
// channels that covers kg with the fewest padded lanes, the widest on a tie.
inline int best_vectors(int64_t kg, int L, int most) {
  int best = most;
  int64_t best_waste = -1;
  for (int v = most; v >= 1; --v) {
    const int64_t width = int64_t{v} * L, waste = (kg + width - 1) / width * width - kg;
    if (best_waste < 0 || waste < best_waste) best = v, best_waste = waste;
  }
  return best;
}

// How far the last output's last tap reaches past the input along axis a
// (the back padding the kernel needs; <= 0 when none).
inline int64_t padded_reach(const ConvShape& s, int a) {
  return (s.out[a] - 1) * s.stride[a] - s.pad[a] + (s.kernel[a] - 1) * s.dilation[a] + 1 - s.in[a];
}

// Outputs along W whose every tap lies in [0, in W): [lo, hi).
inline void interior_w(const ConvShape& s, int64_t& lo, int64_t& hi) {
  const int64_t S = s.stride[2], P = s.pad[2], reach = (s.kernel[2] - 1) * s.dilation[2];
  lo = std::min<int64_t>(s.out[2], std::max<int64_t>(0, (P + S - 1) / S));
  hi = std::clamp<int64_t>(floor_div(s.in[2] - 1 + P - reach, S) + 1, lo, s.out[2]);
}

// The input rows (D, H) that output row (od, oh) of image n reads, with the
// first tap index of each: at most kernel D * kernel H of them.
struct TapRows {
  std::vector<const float*> x;
  std::vector<int64_t> tap;
  int count = 0;
  void find(const ConvShape& s, const float* image, int64_t od, int64_t oh, int64_t row_elems) {
    count = 0;
    for (int64_t td = 0; td < s.kernel[0]; ++td) {
      const int64_t id = od * s.stride[0] - s.pad[0] + td * s.dilation[0];
      if (id < 0 || id >= s.in[0]) continue;
      for (int64_t th = 0; th < s.kernel[1]; ++th) {
        const int64_t ih = oh * s.stride[1] - s.pad[1] + th * s.dilation[1];
        if (ih < 0 || ih >= s.in[1]) continue;
        x[count] = image + (id * s.in[1] + ih) * row_elems;
        tap[count] = (td * s.kernel[1] + th) * s.kernel[2];
        ++count;
      }
    }
  }
};

template <class Ops, int OWB>
void depthwise(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  using R = typename Ops::R;
  constexpr int L = Ops::L;
  const int64_t C = s.c, KW = s.kernel[2], kvol = s.kernel[0] * s.kernel[1] * KW;
  const int64_t IW = s.in[2], OW = s.out[2], S = s.stride[2], P = s.pad[2], DW = s.dilation[2];
  const int64_t row_elems = IW * C, cfull = C / L * L;
  float* wp = scratch(ScratchSlot::direct_weights, static_cast<std::size_t>(kvol * C));  // [tap][c]
  // Blocks of 16 channels: their kvol x 16 weights are read in sequence and
  // written as kvol runs of 16, every line touched staying in L1.
  for (int64_t c0 = 0; c0 < C; c0 += 16)
    for (int64_t c = c0; c < std::min(C, c0 + 16); ++c)
      for (int64_t t = 0; t < kvol; ++t) wp[t * C + c] = w[c * kvol + t];
  int64_t lo, hi;
  interior_w(s, lo, hi);
  const int64_t rows = s.n * s.out[0] * s.out[1];
  const int team = threads::team_size(std::min<int64_t>(rows, rows * OW * C * kvol / 4096 + 1));
  alignas(64) static const float zeros[L] = {};
#pragma omp parallel num_threads(team) if (team > 1)
  {
    TapRows taps{std::vector<const float*>(static_cast<std::size_t>(s.kernel[0] * s.kernel[1])),
                 std::vector<int64_t>(static_cast<std::size_t>(s.kernel[0] * s.kernel[1]))};
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t oh = row % s.out[1], od = (row / s.out[1]) % s.out[0], n = row / (s.out[0] * s.out[1]);
      taps.find(s, x + n * s.in[0] * s.in[1] * row_elems, od, oh, row_elems);
      float* orow = out + row * OW * C;
      for (int64_t c0 = 0; c0 < cfull; c0 += L) {
        const R b0 = bias ? Ops::load(bias + c0) : Ops::zero();
        for (int64_t ow = 0; ow < OW; ow += OWB) {
          R acc[OWB];
          for (int i = 0; i < OWB; ++i) acc[i] = b0;
          if (ow >= lo && ow + OWB <= hi) {  // the interior: every tap inside
            for (int r = 0; r < taps.count; ++r) {
              const float* xr = taps.x[r] + (ow * S - P) * C + c0;
              const float* wr = wp + taps.tap[r] * C + c0;
              for (int64_t tw = 0; tw < KW; ++tw) {
                const R wv = Ops::load(wr + tw * C);
                const float* xp = xr + tw * DW * C;
                for (int i = 0; i < OWB; ++i) acc[i] = Ops::fma(Ops::load(xp + i * S * C), wv, acc[i]);
              }
            }
          } else {  // a border or short block: taps outside the input read zeros
            for (int r = 0; r < taps.count; ++r) {
              const float* wr = wp + taps.tap[r] * C + c0;
              for (int64_t tw = 0; tw < KW; ++tw) {
                const R wv = Ops::load(wr + tw * C);
                for (int i = 0; i < OWB; ++i) {
                  const int64_t iw = (ow + i) * S - P + tw * DW;
                  const float* px = iw >= 0 && iw < IW ? taps.x[r] + iw * C + c0 : zeros;
                  acc[i] = Ops::fma(Ops::load(px), wv, acc[i]);
                }
              }
            }
          }
          // Constant indices only (a loop to `count` would index acc at run
          // time and keep it in memory instead of registers).
          const int64_t count = std::min<int64_t>(OWB, OW - ow);
          for (int i = 0; i < OWB; ++i)
            if (i < count) Ops::store(orow + (ow + i) * C + c0, acc[i]);
        }
      }
      for (int64_t c = cfull; c < C; ++c)  // channels past the last full vector
        for (int64_t ow = 0; ow < OW; ++ow) {
          float acc = bias ? bias[c] : 0.0f;
          for (int r = 0; r < taps.count; ++r)
            for (int64_t tw = 0; tw < KW; ++tw) {
              const int64_t iw = ow * S - P + tw * DW;
              if (iw >= 0 && iw < IW) acc += taps.x[r][iw * C + c] * wp[(taps.tap[r] + tw) * C + c];
            }
          orow[ow * C + c] = acc;
        }
    }
  }
}

// The planes' element types: fp32, or bf16 / f16 bits (Note [16-bit
// depthwise planes]).
template <DType D>
struct PlaneElem {
  using T = std::conditional_t<D == DType::f32, float, uint16_t>;
};

// Depthwise on NCDHW planes (one input and one output channel per group):
// each output row is a sum of input rows times scalar weights, with
// vectors along W. Each input row is copied once into a zero-padded buffer
// split into `stride` phases (element q of the padded row goes to phase
// q % stride, slot q / stride), so every tap of a block of L outputs is one
// contiguous vector load whatever the stride, and borders need no checks.
//
// Note [Depthwise row tails]
// The end of an output row past its last U vectors (U·L = 64 columns on
// AVX-512: the whole of MobileNet-V2's 56-, 28-, 14- and 7-wide rows, 48
// of its 112) went through a one-vector tail loop: one FMA chain per
// vector, latency-bound, with the tap's phase and slot found by an integer
// division per tap. That end now takes 1 to U - 1 vectors at once, and
// the taps' offsets are computed once per call. One thread,
// MobileNet-V2's NCHW layers: 144 channels at 56 x 56, batch 1, bf16
// 0.60 -> 0.13 ms, f32 0.55 -> 0.096; 32 at 112 x 112 f32 0.25 -> 0.145; batch 8, 144 at 56 x 56 bf16
// 4.7 -> 1.03 ms. (Narrow rows, under ops/conv/params.h's kPlanarMinWidth,
// still go faster staged to channels-last: 1.3-4x at 7-28 wide.)
//
// Note [16-bit depthwise planes]
// bf16 and f16 planes are widened row by row as the rows are copied into
// that buffer (which every row goes through anyway), and a plane's outputs
// are summed into a per-thread fp32 plane and rounded into place once it
// is done, so nothing beyond a plane is staged: staging whole tensors as
// fp32 (38 MiB in, 10 out at 8 x 96 x 112 x 112, stride 2) left the bf16
// kernel no faster than im2col there. Both conversions are convert.h's
// vector kernels: element by element, f16 went through a function call
// each way and ran 0.2-0.45x im2col on MobileNet-V2's NCHW layers.
template <class Ops, DType D = DType::f32>
void depthwise_planes(const ConvShape& s, const typename PlaneElem<D>::T* x, const float* w, const float* bias,
                      typename PlaneElem<D>::T* out) {
  using E = PlaneElem<D>;
  constexpr bool kWide = D == DType::f32;
  using R = typename Ops::R;
  constexpr int L = Ops::L;
  const int64_t C = s.c, KH = s.kernel[1], KW = s.kernel[2], kvol = s.kernel[0] * KH * KW;
  const int64_t IH = s.in[1], IW = s.in[2], OD = s.out[0], OH = s.out[1], OW = s.out[2];
  const int64_t S = s.stride[2], P = s.pad[2], DW = s.dilation[2];
  const int64_t reach = (KW - 1) * DW;
  // Phase length: enough for OW rounded up to whole vectors plus the taps' reach.
  const int64_t owp = (OW + L - 1) / L * L, phase_len = owp + reach / S + 1;
  const int64_t in_plane = s.in[0] * IH * IW, out_plane = OD * OH * OW;
  const int64_t planes = s.n * C;
  const int team = threads::team_size(std::min<int64_t>(planes, planes * out_plane * kvol / 4096 + 1));
#pragma omp parallel num_threads(team) if (team > 1)
  {
    // Padded, phase-split copies of every input row of a plane: [d][h][phase][slot].
    std::vector<float> rows(static_cast<std::size_t>(s.in[0] * IH * S * phase_len));
    // The input rows an output row reads, and their weight rows.
    std::vector<const float*> rowp(static_cast<std::size_t>(s.kernel[0] * KH)), wrow(rowp.size());
    // 16-bit planes: the plane's outputs in fp32 until they are rounded into place, and (strided) the
    // input row being copied, widened.
    std::vector<float> plane_out(kWide ? 0 : static_cast<std::size_t>(out_plane));
    std::vector<float> wide_row(kWide ? 0 : static_cast<std::size_t>(IW));
    const WidenFn widen = kWide ? nullptr : widen_variant(D, gemm_isa_of(Ops::kIsa));
    const RoundFn narrow = kWide ? nullptr : round_variant(D, gemm_isa_of(Ops::kIsa));
    // Where tap tw of output 0 lies in a row's phase copies: phase q % S, slot q / S (q = tw·DW).
    std::vector<int64_t> tap_off(static_cast<std::size_t>(KW));
    for (int64_t tw = 0; tw < KW; ++tw) tap_off[tw] = (tw * DW % S) * phase_len + tw * DW / S;
    alignas(64) float tail[L];
#pragma omp for schedule(static)
    for (int64_t plane = 0; plane < planes; ++plane) {
      const int64_t c = plane % C;
      const typename E::T* xp = x + plane * in_plane;
      float* op;
      if constexpr (kWide) op = out + plane * out_plane;
      else op = plane_out.data();
      const float* wc = w + c * kvol;
      for (int64_t r = 0; r < s.in[0] * IH; ++r) {
        float* dst = rows.data() + r * S * phase_len;
        const typename E::T* row = xp + r * IW;
        if (S == 1) {  // one phase: the row behind P zeros (a 16-bit row widened straight into place)
          const int64_t n = std::max<int64_t>(0, std::min(IW, phase_len - P));
          std::fill_n(dst, std::min(P, phase_len), 0.0f);
          if constexpr (kWide) {
            if (n > 0) std::memcpy(dst + P, row, sizeof(float) * static_cast<std::size_t>(n));
          } else {
            if (n > 0) widen(row, dst + P, n);
          }
          std::fill(dst + std::min(phase_len, P + n), dst + phase_len, 0.0f);
          continue;
        }
        // Strided: the phases gather from the fp32 row (a 16-bit one widened first).
        const float* src;
        if constexpr (kWide) {
          src = row;
        } else {
          widen(row, wide_row.data(), IW);
          src = wide_row.data();
        }
        std::fill_n(dst, S * phase_len, 0.0f);
        // Phase by phase: padded position q = S * slot + ph holds input iw = q - P,
        // a loop of stride-S loads and contiguous stores (one loop of scalar
        // scatters over the row held a stride-2 layer at a third of stride 1's rate).
        for (int64_t ph = 0; ph < S; ++ph) {
          const int64_t first = ph >= P ? 0 : (P - ph + S - 1) / S;  // the first slot with iw >= 0
          const int64_t last = std::min(phase_len, (IW - 1 + P - ph) / S + 1);  // past the last with iw < IW
          float* d = dst + ph * phase_len;
          const float* in = src + (S * first + ph - P);
          for (int64_t slot = first; slot < last; ++slot) d[slot] = in[S * (slot - first)];
        }
      }
      const R b0 = Ops::set1(bias ? bias[c] : 0.0f);
      constexpr int U = 4;  // output vectors in flight: independent FMA chains hide the FMA latency
      for (int64_t od = 0; od < OD; ++od)
        for (int64_t oh = 0; oh < OH; ++oh) {
          int nr = 0;
          for (int64_t td = 0; td < s.kernel[0]; ++td) {
            const int64_t id = od * s.stride[0] - s.pad[0] + td * s.dilation[0];
            if (id < 0 || id >= s.in[0]) continue;
            for (int64_t th = 0; th < KH; ++th) {
              const int64_t ih = oh * s.stride[1] - s.pad[1] + th * s.dilation[1];
              if (ih < 0 || ih >= IH) continue;
              rowp[nr] = rows.data() + (id * IH + ih) * S * phase_len;
              wrow[nr++] = wc + (td * KH + th) * KW;
            }
          }
          float* orow = op + (od * OH + oh) * OW;
          // V output vectors from column ow (the last may run past OW: the
          // phase rows are long enough, and only OW - ow columns are stored).
          auto vectors = [&]<int V>(int64_t ow) {
            R acc[V];
            for (int u = 0; u < V; ++u) acc[u] = b0;
            for (int r = 0; r < nr; ++r)
              for (int64_t tw = 0; tw < KW; ++tw) {
                const float* base = rowp[r] + tap_off[tw] + ow;
                const R wv = Ops::set1(wrow[r][tw]);
                for (int u = 0; u < V; ++u) acc[u] = Ops::fma(Ops::load(base + u * L), wv, acc[u]);
              }
            for (int u = 0; u < V; ++u) {
              if (ow + (u + 1) * L <= OW) {
                Ops::store(orow + ow + u * L, acc[u]);
              } else {
                Ops::store(tail, acc[u]);
                std::memcpy(orow + ow + u * L, tail, sizeof(float) * static_cast<std::size_t>(OW - ow - u * L));
              }
            }
          };
          int64_t ow = 0;
          for (; ow + U * L <= OW; ow += U * L) vectors.template operator()<U>(ow);
          // Note [Depthwise row tails]
          switch ((OW - ow + L - 1) / L) {
            case 1: vectors.template operator()<1>(ow); break;
            case 2: vectors.template operator()<2>(ow); break;
            case 3: vectors.template operator()<3>(ow); break;
            default: break;
          }
        }
      if constexpr (!kWide) narrow(op, out + plane * out_plane, out_plane);
    }
  }
}

// depthwise_planes for the dtype of x and out (f32, bf16 or f16).
template <class Ops>
void depthwise_planes_of(const ConvShape& s, DType dtype, const void* x, const float* w, const float* bias, void* out) {
  switch (dtype) {
    case DType::bf16:
      return depthwise_planes<Ops, DType::bf16>(s, static_cast<const uint16_t*>(x), w, bias, static_cast<uint16_t*>(out));
    case DType::f16:
      return depthwise_planes<Ops, DType::f16>(s, static_cast<const uint16_t*>(x), w, bias, static_cast<uint16_t*>(out));
    default:
      return depthwise_planes<Ops>(s, static_cast<const float*>(x), w, bias, static_cast<float*>(out));
  }
}

// The input with its zero padding written out, [n][Dp][Hp][Wp][c], so every
// tap of every output lies inside it (null work when there is no padding:
// x itself is returned).
inline const float* padded_input(const ConvShape& s, const float* x, int64_t (&dims)[3]) {
  for (int a = 0; a < 3; ++a) dims[a] = s.in[a] + s.pad[a] + std::max<int64_t>(0, padded_reach(s, a));
  if (dims[0] == s.in[0] && dims[1] == s.in[1] && dims[2] == s.in[2] && !s.pad[0] && !s.pad[1] && !s.pad[2])
    return x;
  const int64_t C = s.c, rows = s.n * dims[0] * dims[1];
  float* buf = scratch(ScratchSlot::direct_input, static_cast<std::size_t>(rows * dims[2] * C));
  const int team = threads::team_size(std::min<int64_t>(rows, rows * dims[2] * C / 16384 + 1));
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t h = r % dims[1] - s.pad[1], d = (r / dims[1]) % dims[0] - s.pad[0], n = r / (dims[0] * dims[1]);
    float* dst = buf + r * dims[2] * C;
    if (d < 0 || d >= s.in[0] || h < 0 || h >= s.in[1]) {
      std::fill_n(dst, dims[2] * C, 0.0f);
      continue;
    }
    const float* src = x + ((n * s.in[0] + d) * s.in[1] + h) * s.in[2] * C;
    std::fill_n(dst, s.pad[2] * C, 0.0f);
    std::memcpy(dst + s.pad[2] * C, src, sizeof(float) * static_cast<std::size_t>(s.in[2] * C));
    std::fill(dst + (s.pad[2] + s.in[2]) * C, dst + dims[2] * C, 0.0f);
  }
  return buf;
}

// The weight packed as [g][j block][tap][ci][JV] (zero past kg): a block of
// JV output channels at a time, whose rows are contiguous in w.
template <int JV>
float* pack_general_weights(const ConvShape& s, const float* w, int64_t nj) {
  const int64_t G = s.groups, cg = s.c / G, kg = s.k / G, kvol = s.kernel[0] * s.kernel[1] * s.kernel[2];
  float* wp = scratch(ScratchSlot::direct_weights, static_cast<std::size_t>(G * nj * kvol * cg * JV));
  const int team = threads::team_size(G * nj);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t b = 0; b < G * nj; ++b) {
    const int64_t g = b / nj, jb = b % nj;
    float* dst = wp + b * kvol * cg * JV;
    for (int64_t jj = 0; jj < JV; ++jj) {
      const int64_t j = jb * JV + jj;
      const float* src = w + (g * kg + j) * cg * kvol;  // [ci][tap] of output channel j
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t t = 0; t < kvol; ++t) dst[(t * cg + ci) * JV + jj] = j < kg ? src[ci * kvol + t] : 0.0f;
    }
  }
  return wp;
}

template <class Ops, int OWB, int JB>
void general(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  using R = typename Ops::R;
  constexpr int L = Ops::L, JV = JB * L;
  const int64_t C = s.c, K = s.k, G = s.groups, cg = C / G, kg = K / G;
  const int64_t kvol = s.kernel[0] * s.kernel[1] * s.kernel[2], nj = (kg + JV - 1) / JV;
  const float* wp = pack_general_weights<JV>(s, w, nj);
  int64_t dims[3];
  const float* xp = padded_input(s, x, dims);
  // Tap offsets in the padded input, the same for every output point.
  std::vector<int64_t> toff(static_cast<std::size_t>(kvol));
  for (int64_t t = 0; t < kvol; ++t) {
    const int64_t td = t / (s.kernel[1] * s.kernel[2]), th = (t / s.kernel[2]) % s.kernel[1], tw = t % s.kernel[2];
    toff[t] = ((td * s.dilation[0] * dims[1] + th * s.dilation[1]) * dims[2] + tw * s.dilation[2]) * C;
  }
  // Output points of an image, flattened (od, oh, ow), in blocks of OWB: a
  // block may span output rows, since each point keeps its own input pointer.
  const int64_t points = s.out[0] * s.out[1] * s.out[2], nblocks = (points + OWB - 1) / OWB;
  const int64_t items = s.n * nblocks * G;
  const int team = threads::team_size(items);
#pragma omp parallel num_threads(team) if (team > 1)
  {
    alignas(64) float bias_block[JV];
    alignas(64) float tail[JV];
#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t g = item % G, blk = (item / G) % nblocks, n = item / (G * nblocks);
      const int64_t q0 = blk * OWB, count = std::min<int64_t>(OWB, points - q0);
      const float* xs[OWB];
      for (int i = 0; i < OWB; ++i) {
        const int64_t q = q0 + std::min<int64_t>(i, count - 1);  // a short block repeats its last point
        const int64_t ow = q % s.out[2], oh = (q / s.out[2]) % s.out[1], od = q / (s.out[1] * s.out[2]);
        xs[i] = xp + (((n * dims[0] + od * s.stride[0]) * dims[1] + oh * s.stride[1]) * dims[2] + ow * s.stride[2]) * C +
                g * cg;
      }
      for (int64_t jb = 0; jb < nj; ++jb) {
        const int64_t j0 = g * kg + jb * JV, valid = std::min<int64_t>(JV, kg - jb * JV);
        R acc[OWB][JB];
        for (int j = 0; j < JB; ++j) {
          for (int64_t l = 0; l < L; ++l) {
            const int64_t jj = j * L + l;
            bias_block[jj] = bias && jj < valid ? bias[j0 + jj] : 0.0f;
          }
          const R b = Ops::load(bias_block + j * L);
          for (int i = 0; i < OWB; ++i) acc[i][j] = b;
        }
        const float* wq = wp + (g * nj + jb) * kvol * cg * JV;
        for (int64_t t = 0; t < kvol; ++t, wq += cg * JV) {
          const float* xt[OWB];
          for (int i = 0; i < OWB; ++i) xt[i] = xs[i] + toff[t];
          for (int64_t ci = 0; ci < cg; ++ci) {
            R wv[JB];
            for (int j = 0; j < JB; ++j) wv[j] = Ops::load(wq + ci * JV + j * L);
            for (int i = 0; i < OWB; ++i) {
              const R xb = Ops::set1(xt[i][ci]);
              for (int j = 0; j < JB; ++j) acc[i][j] = Ops::fma(xb, wv[j], acc[i][j]);
            }
          }
        }
        float* obase = out + (n * points + q0) * K + j0;
        for (int i = 0; i < OWB; ++i) {  // constant indices: acc stays in registers
          if (i >= count) break;
          if (valid == JV) {
            for (int j = 0; j < JB; ++j) Ops::store(obase + i * K + j * L, acc[i][j]);
            continue;
          }
          for (int j = 0; j < JB; ++j) Ops::store(tail + j * L, acc[i][j]);
          std::memcpy(obase + i * K, tail, sizeof(float) * static_cast<std::size_t>(valid));
        }
      }
    }
  }
}

}  // namespace bp::kernels::cpu::detail
