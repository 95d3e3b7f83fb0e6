// im2col:gemm: convolution lowered to matrix products on the matmul op's
// dispatcher (Properties::calls = {"matmul"}), so matmul's knobs and kernels
// apply to the products (preferred_blas_library, its fp32 precision,
// cpu.benchmark for matmul).
//
// Forward: the input patches are gathered into a column matrix (one row per
// input channel and kernel tap, NCDHW; one row per output point, channels-
// last) and multiplied by the weight viewed as a matrix. The product is
// written straight into the output (a [N, G, K/G, OD*OH*OW] view for
// NCDHW, [N, OD*OH*OW, K] for channels-last with one group), so nothing is
// copied afterwards. 1x1 convolutions with unit stride and no padding need
// no column matrix at all: the input is the matrix.
// Transposed: the product W^T x gives every (output channel, tap, input
// point) contribution, and col2im adds them into the output; a thread owns
// a (batch, output channel) plane, so the sums are deterministic.
// Column matrices are built for a chunk of the batch at a time (at most
// kColumnBudget bytes), so memory stays bounded for large batches.

#include <algorithm>
#include <cstring>

#include "backplane/dispatch_checks.h"
#include "core/threads.h"
#include "ops/conv/impls.h"
#include "ops/conv/params.h"
#include "ops/matmul/impls.h"
#include "ops/matmul/params.h"

namespace bp::ops::conv {
namespace {

constexpr int64_t kColumnBudget = int64_t{32} << 20;

// A view of `storage` (element offset `offset`) with the given shape and strides.
Tensor view(const Tensor& base, const Shape& shape, const Shape& strides, int64_t offset = 0) {
  return Tensor::from_storage(base.storage(), shape, strides, base.storage_offset() + offset, base.dtype());
}

// out[b] = a[b] @ b[b] (+ bias[b]) on the matmul dispatcher; out is a
// contiguous [nb, G, m, n] view, the others broadcast views of that batch shape.
void product(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& bias, DType dtype) {
  matmul::Params mp;
  mp.a = a;
  mp.b = b;
  mp.out = out;
  mp.bias = bias;
  mp.beta = bias.defined() ? 1.0 : 0.0;
  mp.dtype = dtype;
  mp.device = Device::cpu();
  mp.batch_shape = {a.size(0), a.size(1)};
  mp.batch = a.size(0) * a.size(1);
  mp.m = a.size(2);
  mp.k = a.size(3);
  mp.n = b.size(3);
  dispatch::execute(matmul::matmul_op(), matmul::problem_of(mp), &mp);
}

int64_t chunk_of(const Params& p, int64_t per_image_bytes) {
  return std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(per_image_bytes, 1), 1, p.n);
}

// NCDHW columns of images [n0, n0 + nb): cols[b][g][c*kvol + t][o].
template <class T>
void gather_ncdhw(const Params& p, const Tensor& x, int64_t n0, int64_t nb, T* cols) {
  const int64_t kvol = p.kernel_volume(), ovol = p.out_volume();
  const T* src = static_cast<const T*>(x.data());
  const int64_t rows = nb * p.c * kvol;
  const int team = threads::team_size(rows * ovol / 16384 + 1);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = r % kvol, c = (r / kvol) % p.c, b = r / (kvol * p.c);
    const int64_t td = t / (p.kernel[1] * p.kernel[2]), th = (t / p.kernel[2]) % p.kernel[1], tw = t % p.kernel[2];
    T* dst = cols + r * ovol;
    const T* plane = src + (n0 + b) * x.stride(0) + c * x.stride(1);
    for (int64_t od = 0; od < p.outs[0]; ++od) {
      const int64_t id = od * p.stride[0] - p.pad[0] + td * p.dilation[0];
      for (int64_t oh = 0; oh < p.outs[1]; ++oh) {
        const int64_t ih = oh * p.stride[1] - p.pad[1] + th * p.dilation[1];
        T* row = dst + (od * p.outs[1] + oh) * p.outs[2];
        if (id < 0 || id >= p.in[0] || ih < 0 || ih >= p.in[1]) {
          std::fill_n(row, p.outs[2], T{});
          continue;
        }
        const T* line = plane + id * x.stride(2) + ih * x.stride(3);
        int64_t lo, hi;
        valid_outputs(p, 2, tw, lo, hi);
        std::fill_n(row, lo, T{});
        // Output ow reads input column ow * stride - pad + tw * dilation, in range for ow in [lo, hi).
        const int64_t xs = x.stride(4), off = -p.pad[2] + tw * p.dilation[2];
        if (hi > lo && p.stride[2] * xs == 1) {
          std::memcpy(row + lo, line + lo + off, sizeof(T) * static_cast<std::size_t>(hi - lo));
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) row[ow] = line[(ow * p.stride[2] + off) * xs];
        }
        std::fill(row + hi, row + p.outs[2], T{});
      }
    }
  }
}

// Channels-last columns of images [n0, n0 + nb): cols[b][g][o][t][c'] (x dense NDHWC).
template <class T>
void gather_ndhwc(const Params& p, const Tensor& x, int64_t n0, int64_t nb, T* cols) {
  const int64_t kvol = p.kernel_volume(), ovol = p.out_volume(), cg = p.cg(), G = p.groups;
  const T* src = static_cast<const T*>(x.data());
  const int64_t points = nb * ovol;
  const int team = threads::team_size(points * kvol * p.c / 16384 + 1);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t q = 0; q < points; ++q) {
    const int64_t b = q / ovol, o = q % ovol;
    const int64_t od = o / (p.outs[1] * p.outs[2]), oh = (o / p.outs[2]) % p.outs[1], ow = o % p.outs[2];
    const T* image = src + (n0 + b) * x.stride(0);
    for (int64_t t = 0; t < kvol; ++t) {
      const int64_t td = t / (p.kernel[1] * p.kernel[2]), th = (t / p.kernel[2]) % p.kernel[1], tw = t % p.kernel[2];
      const int64_t id = od * p.stride[0] - p.pad[0] + td * p.dilation[0];
      const int64_t ih = oh * p.stride[1] - p.pad[1] + th * p.dilation[1];
      const int64_t iw = ow * p.stride[2] - p.pad[2] + tw * p.dilation[2];
      const bool inside = id >= 0 && id < p.in[0] && ih >= 0 && ih < p.in[1] && iw >= 0 && iw < p.in[2];
      const T* px = image + id * x.stride(2) + ih * x.stride(3) + iw * x.stride(4);
      for (int64_t g = 0; g < G; ++g) {
        T* dst = cols + ((b * G + g) * ovol + o) * kvol * cg + t * cg;
        if (inside)
          std::memcpy(dst, px + g * cg, sizeof(T) * static_cast<std::size_t>(cg));
        else
          std::fill_n(dst, cg, T{});
      }
    }
  }
}

// The weight as [G, kvol * C/G, K/G] with rows in (tap, channel) order, the
// column order of gather_ndhwc: a copy, when the weight cannot be viewed
// that way (weight_rows). The copy goes K/G-block by block so that both the
// reads (kBlock weight rows, each read in order) and the writes (kBlock
// adjacent elements of a row) stay on a few cache lines: walking one side
// with a stride of K/G elements made it cost more than a 1x1 layer's product.
template <class T>
Tensor weight_tap_major(const Params& p, const Tensor& w) {
  constexpr int64_t kBlock = 16;
  const int64_t kvol = p.kernel_volume(), cg = p.cg(), kg = p.kg();
  Tensor out = Tensor::empty({p.groups, kvol * cg, kg}, w.dtype());
  const Tensor wc = w.contiguous();  // [K, C/G, KD, KH, KW]
  const T* s = static_cast<const T*>(wc.data());
  T* d = static_cast<T*>(out.data());
  for (int64_t g = 0; g < p.groups; ++g)
    for (int64_t k0 = 0; k0 < kg; k0 += kBlock) {
      const int64_t k1 = std::min(kg, k0 + kBlock);
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t t = 0; t < kvol; ++t) {
          T* row = d + (g * kvol * cg + t * cg + c) * kg;
          const T* col = s + ((g * kg) * cg + c) * kvol + t;
          for (int64_t kk = k0; kk < k1; ++kk) row[kk] = col[kk * cg * kvol];
        }
    }
  return out;
}

// Note [Channels-last weight rows]
// A channels-last product reads the weight as B = [G, kvol * C/G, K/G] with
// rows in (tap, channel) order. Two common weights are that matrix already,
// transposed: a 1x1 kernel (B[c, k] = w[k, c]) and a weight stored channels-
// last itself ([K, KD, KH, KW, C/G] in memory, as PyTorch's
// to(memory_format=torch.channels_last) leaves it: B[t * C/G + c, k] =
// w[k, c, t]). Those become a strided view that matmul packs like any
// transposed operand; any other weight is reordered (weight_tap_major).
bool viewable_as_rows(const Params& p) {
  if (p.kernel_volume() == 1) return true;
  // Channels-last dense: c has stride 1, then kw, kh, kd, k outwards (a
  // dim of size 1 may have any stride).
  const Tensor& w = p.w;
  if (p.cg() > 1 && w.stride(1) != 1) return false;
  int64_t expected = p.cg();
  for (int64_t d : {4, 3, 2, 0}) {
    if (w.size(d) > 1 && w.stride(d) != expected) return false;
    expected *= w.size(d);
  }
  return true;
}

// B for batch chunk nb: [nb, G, kvol * C/G, K/G], broadcast over the batch.
// `reordered` holds weight_tap_major's copy when one was needed.
Tensor weight_rows(const Params& p, const Tensor& reordered, int64_t nb) {
  const int64_t ck = p.cg() * p.kernel_volume(), kg = p.kg(), G = p.groups;
  if (reordered.defined()) return view(reordered, {nb, G, ck, kg}, {0, ck * kg, kg, 1});
  const int64_t s0 = p.w.stride(0), row = p.kernel_volume() == 1 ? p.w.stride(1) : 1;
  return view(p.w, {nb, G, ck, kg}, {0, kg * s0, row, s0});
}

Tensor bias_view(const Params& p, int64_t nb, bool channels_last_rows, int64_t points) {
  if (!p.has_bias()) return Tensor();
  const int64_t kg = p.kg(), s = p.bias.stride(0);
  // [nb, G, kg, points] with the channel along rows, or [nb, G, points, kg] along columns.
  if (!channels_last_rows) return view(p.bias, {nb, p.groups, kg, points}, {0, kg * s, s, 0});
  return view(p.bias, {nb, p.groups, points, kg}, {0, kg * s, 0, s});
}

template <class T>
void forward(const Params& p) {
  const int64_t kvol = p.kernel_volume(), ovol = p.out_volume(), cg = p.cg(), kg = p.kg(), G = p.groups;
  const int64_t ck = cg * kvol;
  const bool pointwise = kvol == 1 && p.unit_stride() && p.pad[0] == 0 && p.pad[1] == 0 && p.pad[2] == 0;
  const std::size_t item = sizeof(T);
  if (!p.channels_last) {
    const Tensor w = p.w.contiguous();
    const Tensor x = pointwise ? dense_5d(p.x, p.dtype, false) : p.x;
    const int64_t nb_max = pointwise ? p.n : chunk_of(p, G * ck * ovol * static_cast<int64_t>(item));
    StoragePtr buffer = pointwise ? nullptr : allocate_storage(Device::cpu(), item * static_cast<std::size_t>(nb_max * G * ck * ovol));
    Tensor cols_base = buffer ? Tensor::from_storage(buffer, {nb_max * G * ck * ovol}, {1}, 0, p.dtype) : Tensor();
    for (int64_t n0 = 0; n0 < p.n; n0 += nb_max) {
      const int64_t nb = std::min(nb_max, p.n - n0);
      Tensor b;
      if (pointwise) {
        b = view(x, {nb, G, cg, ovol}, {p.c * ovol, cg * ovol, ovol, 1}, n0 * p.c * ovol);
      } else {
        gather_ncdhw<T>(p, p.x, n0, nb, static_cast<T*>(cols_base.data()));
        b = view(cols_base, {nb, G, ck, ovol}, {G * ck * ovol, ck * ovol, ovol, 1});
      }
      const Tensor a = view(w, {nb, G, kg, ck}, {0, kg * ck, ck, 1});
      const Tensor out = view(p.out, {nb, G, kg, ovol}, {p.k * ovol, kg * ovol, ovol, 1}, n0 * p.k * ovol);
      product(a, b, out, bias_view(p, nb, false, ovol), p.dtype);
    }
    return;
  }
  // Channels-last: out[n] is [points, K]; with one group the product lands in it.
  const Tensor wt = viewable_as_rows(p) ? Tensor() : weight_tap_major<T>(p, p.w);  // Note [Channels-last weight rows]
  const Tensor x = dense_5d(p.x, p.dtype, true);
  const int64_t nb_max = pointwise ? p.n : chunk_of(p, G * ck * ovol * static_cast<int64_t>(item));
  StoragePtr buffer = pointwise ? nullptr : allocate_storage(Device::cpu(), item * static_cast<std::size_t>(nb_max * G * ck * ovol));
  Tensor cols_base = buffer ? Tensor::from_storage(buffer, {nb_max * G * ck * ovol}, {1}, 0, p.dtype) : Tensor();
  Tensor staging = G > 1 ? Tensor::empty({nb_max, G, ovol, kg}, p.dtype) : Tensor();
  for (int64_t n0 = 0; n0 < p.n; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, p.n - n0);
    Tensor a;
    if (pointwise) {
      a = view(x, {nb, G, ovol, cg}, {ovol * p.c, cg, p.c, 1}, n0 * ovol * p.c);
    } else {
      gather_ndhwc<T>(p, x, n0, nb, static_cast<T*>(cols_base.data()));
      a = view(cols_base, {nb, G, ovol, ck}, {G * ovol * ck, ovol * ck, ck, 1});
    }
    if (G == 1) {
      // One product for the whole chunk: its rows (image, point) follow each
      // other in the input or column matrix and in the output alike, so the
      // weight is packed once per chunk, not once per image.
      const int64_t rows = nb * ovol;
      const Tensor a1 = view(a, {1, 1, rows, ck}, {0, 0, a.stride(2), 1});
      const Tensor out = view(p.out, {1, 1, rows, p.k}, {0, 0, p.k, 1}, n0 * ovol * p.k);
      product(a1, weight_rows(p, wt, 1), out, bias_view(p, 1, true, rows), p.dtype);
      continue;
    }
    const Tensor b = weight_rows(p, wt, nb);
    const Tensor bias = bias_view(p, nb, true, ovol);
    const Tensor tmp = view(staging, {nb, G, ovol, kg}, {G * ovol * kg, ovol * kg, kg, 1});
    product(a, b, tmp, bias, p.dtype);
    Tensor dst = view(p.out, {nb, G, ovol, kg}, {ovol * p.k, kg, p.k, 1}, n0 * ovol * p.k);
    dst.copy_from(tmp);
  }
}

// col2im: out[n, k, i*s - pad + t*d] += cols[n][g][k'*kvol + t][i], after the bias.
template <class W>
void scatter_transposed(const Params& p, const W* cols, int64_t n0, int64_t nb, const Tensor& out, const W* bias) {
  const int64_t kvol = p.kernel_volume(), ivol = p.in_volume();
  const int64_t planes = nb * p.k;
  W* o = static_cast<W*>(out.data());
  const int64_t s0 = out.stride(0), s1 = out.stride(1), s2 = out.stride(2), s3 = out.stride(3), s4 = out.stride(4);
  const int team = threads::team_size(planes);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
  for (int64_t q = 0; q < planes; ++q) {
    const int64_t b = q / p.k, k = q % p.k;
    W* plane = o + (n0 + b) * s0 + k * s1;
    for (int64_t od = 0; od < p.outs[0]; ++od)
      for (int64_t oh = 0; oh < p.outs[1]; ++oh)
        for (int64_t ow = 0; ow < p.outs[2]; ++ow) plane[od * s2 + oh * s3 + ow * s4] = bias ? bias[k] : W{};
    // Rows (k', t) of k's group follow each other, k' = k % kg: plane k's rows start at k * kvol.
    const W* src = cols + (b * p.k + k) * kvol * ivol;
    for (int64_t t = 0; t < kvol; ++t) {
      const int64_t td = t / (p.kernel[1] * p.kernel[2]), th = (t / p.kernel[2]) % p.kernel[1], tw = t % p.kernel[2];
      const W* row = src + t * ivol;
      for (int64_t id = 0; id < p.in[0]; ++id) {
        const int64_t od = id * p.stride[0] - p.pad[0] + td * p.dilation[0];
        if (od < 0 || od >= p.outs[0]) continue;
        for (int64_t ih = 0; ih < p.in[1]; ++ih) {
          const int64_t oh = ih * p.stride[1] - p.pad[1] + th * p.dilation[1];
          if (oh < 0 || oh >= p.outs[1]) continue;
          W* line = plane + od * s2 + oh * s3;
          const W* r = row + (id * p.in[1] + ih) * p.in[2];
          for (int64_t iw = 0; iw < p.in[2]; ++iw) {
            const int64_t ow = iw * p.stride[2] - p.pad[2] + tw * p.dilation[2];
            if (ow >= 0 && ow < p.outs[2]) line[ow * s4] += r[iw];
          }
        }
      }
    }
  }
}

// Transposed, in W (float; double for f64): the product W^T x, then col2im
// into a W staging output, rounded into out at the end for f16 / bf16.
template <class W>
void transposed(const Params& p) {
  const int64_t kvol = p.kernel_volume(), ivol = p.in_volume(), cg = p.cg(), kg = p.kg(), G = p.groups;
  const DType work = std::is_same_v<W, double> ? DType::f64 : DType::f32;
  const bool cl = !dense_ncdhw(p.x) && dense_ndhwc(p.x);
  const Tensor x = dense_5d(p.x, work, cl);
  const Tensor w = p.w.to(work).contiguous();  // [C, K/G, kvol]
  Tensor out = p.dtype == work ? p.out : empty_5d(p.out.shape(), work, p.channels_last);
  const Tensor bias = p.has_bias() ? p.bias.to(work).contiguous() : Tensor();
  const int64_t rows = kg * kvol;
  const int64_t nb_max = chunk_of(p, G * rows * ivol * static_cast<int64_t>(sizeof(W)));
  Tensor cols = Tensor::empty({nb_max, G, rows, ivol}, work);
  // x[n, c] over its points: unit stride (NCDHW) or stride C (channels-last).
  const int64_t sn = p.c * ivol, sc = cl ? 1 : ivol, sp = cl ? p.c : 1;
  for (int64_t n0 = 0; n0 < p.n; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, p.n - n0);
    // a[b][g] = w_g^T: [kg*kvol, cg], a transposed view of w's [cg, kg*kvol] block.
    const Tensor a = view(w, {nb, G, rows, cg}, {0, cg * rows, 1, rows});
    const Tensor b = view(x, {nb, G, cg, ivol}, {sn, cg * sc, sc, sp}, n0 * sn);
    const Tensor c = view(cols, {nb, G, rows, ivol}, {G * rows * ivol, rows * ivol, ivol, 1});
    product(a, b, c, Tensor(), work);
    scatter_transposed<W>(p, static_cast<const W*>(cols.data()), n0, nb, out,
                          bias.defined() ? static_cast<const W*>(bias.data()) : nullptr);
  }
  if (out.storage() != p.out.storage()) {
    Tensor target = p.out;
    target.copy_from(out);
  }
}

void run(const Params& p) {
  if (p.transposed) {
    if (p.dtype == DType::f64)
      transposed<double>(p);
    else
      transposed<float>(p);
    return;
  }
  switch (p.dtype) {
    case DType::f64: forward<double>(p); break;
    case DType::f32: forward<float>(p); break;
    default: forward<uint16_t>(p); break;  // bf16 / f16 bits: gathered as they are, multiplied by matmul
  }
}

}  // namespace

std::unique_ptr<dispatch::Implementation> make_im2col() {
  std::vector<dispatch::Check<Params>> checks;
  checks.push_back(dispatch::checks::dtype_in<Params>({DType::f16, DType::bf16, DType::f32, DType::f64}));
  dispatch::Properties props;
  props.workspace = "the column matrix of a chunk of the batch (at most 32 MiB), weights reordered";
  props.calls = {"matmul"};  // its products go through matmul's dispatch
  return std::make_unique<dispatch::Impl<Params>>("im2col:gemm", "cpu", props, std::move(checks), run);
}

}  // namespace bp::ops::conv
