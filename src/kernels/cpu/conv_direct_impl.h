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
// - General: out[.., g*kg + j] = sum over taps and ci of x[.., g*cg + ci] *
//   w[g*kg + j, ci, tap]. The weight is packed as [g][j block][tap][ci][JB*L]
//   (zero-padded past kg), so the innermost loop (over ci) reads JB weight
//   vectors in sequence; OWB output points share them, each broadcasting its
//   input value: OWB * JB accumulators, JB + OWB loads per OWB * JB FMAs.
// Output points whose taps all lie inside the input (the interior, along W)
// go through the blocked loop; the border points one at a time with bounds
// checks. Rows (D, H) outside the input are skipped. One thread computes
// each output, summing taps then channels in a fixed order, so results are
// independent of the thread count.

#include <algorithm>
#include <cstring>
#include <vector>

#include "backplane/tensor.h"
#include "core/threads.h"
#include "kernels/cpu/conv_direct.h"

namespace bp::kernels::cpu::detail {

inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

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
  StoragePtr packed = allocate_storage(Device::cpu(), sizeof(float) * static_cast<std::size_t>(kvol * C));
  float* wp = static_cast<float*>(packed->data());  // [tap][c]
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < kvol; ++t) wp[t * C + c] = w[c * kvol + t];
  int64_t lo, hi;
  interior_w(s, lo, hi);
  const int64_t rows = s.n * s.out[0] * s.out[1];
  const int team = threads::team_size(std::min<int64_t>(rows, rows * OW * C * kvol / 4096 + 1));
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
        int64_t ow = 0;
        while (ow < OW) {
          if (ow >= lo && ow + OWB <= hi) {
            R acc[OWB];
            for (int i = 0; i < OWB; ++i) acc[i] = b0;
            for (int r = 0; r < taps.count; ++r) {
              const float* xr = taps.x[r] + (ow * S - P) * C + c0;
              const float* wr = wp + taps.tap[r] * C + c0;
              for (int64_t tw = 0; tw < KW; ++tw) {
                const R wv = Ops::load(wr + tw * C);
                const float* xp = xr + tw * DW * C;
                for (int i = 0; i < OWB; ++i) acc[i] = Ops::fma(Ops::load(xp + i * S * C), wv, acc[i]);
              }
            }
            for (int i = 0; i < OWB; ++i) Ops::store(orow + (ow + i) * C + c0, acc[i]);
            ow += OWB;
            continue;
          }
          R acc = b0;
          for (int r = 0; r < taps.count; ++r)
            for (int64_t tw = 0; tw < KW; ++tw) {
              const int64_t iw = ow * S - P + tw * DW;
              if (iw < 0 || iw >= IW) continue;
              acc = Ops::fma(Ops::load(taps.x[r] + iw * C + c0), Ops::load(wp + (taps.tap[r] + tw) * C + c0), acc);
            }
          Ops::store(orow + ow * C + c0, acc);
          ++ow;
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

template <class Ops, int OWB, int JB>
void general(const ConvShape& s, const float* x, const float* w, const float* bias, float* out) {
  using R = typename Ops::R;
  constexpr int L = Ops::L, JV = JB * L;
  const int64_t C = s.c, K = s.k, G = s.groups, cg = C / G, kg = K / G;
  const int64_t KW = s.kernel[2], kvol = s.kernel[0] * s.kernel[1] * KW;
  const int64_t IW = s.in[2], OW = s.out[2], S = s.stride[2], P = s.pad[2], DW = s.dilation[2];
  const int64_t row_elems = IW * C, nj = (kg + JV - 1) / JV;
  const std::size_t packed_elems = static_cast<std::size_t>(G * nj * kvol * cg * JV);
  StoragePtr packed = allocate_storage(Device::cpu(), sizeof(float) * packed_elems);
  float* wp = static_cast<float*>(packed->data());  // [g][jb][tap][ci][JV]
  for (int64_t g = 0; g < G; ++g)
    for (int64_t jb = 0; jb < nj; ++jb)
      for (int64_t t = 0; t < kvol; ++t)
        for (int64_t ci = 0; ci < cg; ++ci) {
          float* dst = wp + (((g * nj + jb) * kvol + t) * cg + ci) * JV;
          for (int64_t jj = 0; jj < JV; ++jj) {
            const int64_t j = jb * JV + jj;
            dst[jj] = j < kg ? w[((g * kg + j) * cg + ci) * kvol + t] : 0.0f;
          }
        }
  int64_t lo, hi;
  interior_w(s, lo, hi);
  const int64_t rows = s.n * s.out[0] * s.out[1], items = rows * G * nj;
  const int team = threads::team_size(items);
#pragma omp parallel num_threads(team) if (team > 1)
  {
    TapRows taps{std::vector<const float*>(static_cast<std::size_t>(s.kernel[0] * s.kernel[1])),
                 std::vector<int64_t>(static_cast<std::size_t>(s.kernel[0] * s.kernel[1]))};
    alignas(64) float bias_block[JV];
    alignas(64) float tail[JV];
#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t jb = item % nj, g = (item / nj) % G, row = item / (nj * G);
      const int64_t oh = row % s.out[1], od = (row / s.out[1]) % s.out[0], n = row / (s.out[0] * s.out[1]);
      taps.find(s, x + n * s.in[0] * s.in[1] * row_elems + g * cg, od, oh, row_elems);
      const int64_t j0 = g * kg + jb * JV, valid = std::min<int64_t>(JV, kg - jb * JV);
      for (int64_t jj = 0; jj < JV; ++jj) bias_block[jj] = bias && jj < valid ? bias[j0 + jj] : 0.0f;
      R b0[JB];
      for (int j = 0; j < JB; ++j) b0[j] = Ops::load(bias_block + j * L);
      const float* wbase = wp + (g * nj + jb) * kvol * cg * JV;
      float* orow = out + row * OW * K + j0;
      auto store = [&](float* dst, const R* acc) {
        if (valid == JV) {
          for (int j = 0; j < JB; ++j) Ops::store(dst + j * L, acc[j]);
          return;
        }
        for (int j = 0; j < JB; ++j) Ops::store(tail + j * L, acc[j]);
        std::memcpy(dst, tail, sizeof(float) * static_cast<std::size_t>(valid));
      };
      int64_t ow = 0;
      while (ow < OW) {
        if (ow >= lo && ow + OWB <= hi) {
          R acc[OWB][JB];
          for (int i = 0; i < OWB; ++i)
            for (int j = 0; j < JB; ++j) acc[i][j] = b0[j];
          for (int r = 0; r < taps.count; ++r) {
            for (int64_t tw = 0; tw < KW; ++tw) {
              const float* xp = taps.x[r] + (ow * S - P + tw * DW) * C;
              const float* wq = wbase + (taps.tap[r] + tw) * cg * JV;
              for (int64_t ci = 0; ci < cg; ++ci) {
                R wv[JB];
                for (int j = 0; j < JB; ++j) wv[j] = Ops::load(wq + ci * JV + j * L);
                for (int i = 0; i < OWB; ++i) {
                  const R xb = Ops::set1(xp[i * S * C + ci]);
                  for (int j = 0; j < JB; ++j) acc[i][j] = Ops::fma(xb, wv[j], acc[i][j]);
                }
              }
            }
          }
          for (int i = 0; i < OWB; ++i) store(orow + (ow + i) * K, acc[i]);
          ow += OWB;
          continue;
        }
        R acc[JB];
        for (int j = 0; j < JB; ++j) acc[j] = b0[j];
        for (int r = 0; r < taps.count; ++r)
          for (int64_t tw = 0; tw < KW; ++tw) {
            const int64_t iw = ow * S - P + tw * DW;
            if (iw < 0 || iw >= IW) continue;
            const float* xp = taps.x[r] + iw * C;
            const float* wq = wbase + (taps.tap[r] + tw) * cg * JV;
            for (int64_t ci = 0; ci < cg; ++ci) {
              const R xb = Ops::set1(xp[ci]);
              for (int j = 0; j < JB; ++j) acc[j] = Ops::fma(xb, Ops::load(wq + ci * JV + j * L), acc[j]);
            }
          }
        store(orow + ow * K, acc);
        ++ow;
      }
    }
  }
}

}  // namespace bp::kernels::cpu::detail
