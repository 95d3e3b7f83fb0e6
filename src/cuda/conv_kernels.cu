// The device kernels of the CUDA conv implementations (conv_kernels.h).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "conv_kernels.h"

namespace bp::cuda_impl {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(e));
}

// Sums run in float (double for f64): the accumulator type of each element type.
template <class T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
__device__ Acc<T> load(const T* p) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(__ldg(p));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(__ldg(p));
  else return __ldg(p);
}
// A plain load, for memory this kernel also writes (the read-only cache is not coherent with it).
template <class T>
__device__ Acc<T> load_plain(const T* p) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(*p);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(*p);
  else return *p;
}
template <class T>
__device__ void store(T* p, Acc<T> v) {
  if constexpr (std::is_same_v<T, __half>) *p = __float2half(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) *p = __float2bfloat16(v);
  else *p = v;
}

struct Geometry {
  int64_t n, c, k, groups, cg, kg;
  int64_t in[3], ker[3], out[3], stride[3], pad[3], dil[3];
  int64_t xs[5], ws[5], os[5];
};

Geometry geometry(const ConvArgs& a) {
  Geometry g{};
  g.n = a.x.sizes[0], g.c = a.x.sizes[1], g.k = a.out.sizes[1], g.groups = a.groups;
  g.cg = g.c / g.groups, g.kg = g.k / g.groups;
  for (int i = 0; i < 3; ++i) {
    g.in[i] = a.x.sizes[2 + i], g.ker[i] = a.w.sizes[2 + i], g.out[i] = a.out.sizes[2 + i];
    g.stride[i] = a.stride[i], g.pad[i] = a.pad[i], g.dil[i] = a.dilation[i];
  }
  for (int i = 0; i < 5; ++i) g.xs[i] = a.x.strides[i], g.ws[i] = a.w.strides[i], g.os[i] = a.out.strides[i];
  return g;
}

// The output element `index` of [N, K, OD, OH, OW] in row-major order.
__device__ void unravel(const Geometry& g, int64_t index, int64_t& n, int64_t& k, int64_t (&o)[3]) {
  o[2] = index % g.out[2];
  index /= g.out[2];
  o[1] = index % g.out[1];
  index /= g.out[1];
  o[0] = index % g.out[0];
  index /= g.out[0];
  k = index % g.k;
  n = index / g.k;
}

template <class T>
__global__ void reference_kernel(Geometry g, const T* x, const T* w, const T* bias, int64_t bias_stride, T* out,
                                 bool transposed, int64_t total) {
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total; idx += int64_t(gridDim.x) * blockDim.x) {
    int64_t n, k, o[3];
    unravel(g, idx, n, k, o);
    const int64_t grp = k / g.kg, kk = k % g.kg;
    Acc<T> acc = bias ? load(bias + k * bias_stride) : Acc<T>(0);
    for (int64_t ci = 0; ci < g.cg; ++ci) {
      const int64_t c = grp * g.cg + ci;
      for (int64_t t0 = 0; t0 < g.ker[0]; ++t0)
        for (int64_t t1 = 0; t1 < g.ker[1]; ++t1)
          for (int64_t t2 = 0; t2 < g.ker[2]; ++t2) {
            const int64_t t[3] = {t0, t1, t2};
            int64_t i[3];
            bool inside = true;
            for (int a = 0; a < 3 && inside; ++a) {
              if (!transposed) {
                i[a] = o[a] * g.stride[a] - g.pad[a] + t[a] * g.dil[a];
              } else {  // the adjoint: input i reaches output o = i*s - pad + t*d
                const int64_t num = o[a] + g.pad[a] - t[a] * g.dil[a];
                inside = num >= 0 && num % g.stride[a] == 0;
                i[a] = num / g.stride[a];
              }
              inside = inside && i[a] >= 0 && i[a] < g.in[a];
            }
            if (!inside) continue;
            const T* px = x + n * g.xs[0] + c * g.xs[1] + i[0] * g.xs[2] + i[1] * g.xs[3] + i[2] * g.xs[4];
            const T* pw = transposed ? w + c * g.ws[0] + kk * g.ws[1] : w + k * g.ws[0] + ci * g.ws[1];
            pw += t0 * g.ws[2] + t1 * g.ws[3] + t2 * g.ws[4];
            acc += load(px) * load(pw);
          }
    }
    store(out + n * g.os[0] + k * g.os[1] + o[0] * g.os[2] + o[1] * g.os[3] + o[2] * g.os[4], acc);
  }
}

// Depthwise: output channel k reads input channel k / (K / C) only.
template <class T>
__global__ void depthwise_kernel(Geometry g, const T* x, const T* w, const T* bias, int64_t bias_stride, T* out,
                                 int64_t total) {
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total; idx += int64_t(gridDim.x) * blockDim.x) {
    int64_t n, k, o[3];
    unravel(g, idx, n, k, o);
    const int64_t c = k / g.kg;
    Acc<T> acc = bias ? load(bias + k * bias_stride) : Acc<T>(0);
    const T* xc = x + n * g.xs[0] + c * g.xs[1];
    const T* wk = w + k * g.ws[0];
    for (int64_t t0 = 0; t0 < g.ker[0]; ++t0) {
      const int64_t i0 = o[0] * g.stride[0] - g.pad[0] + t0 * g.dil[0];
      if (i0 < 0 || i0 >= g.in[0]) continue;
      for (int64_t t1 = 0; t1 < g.ker[1]; ++t1) {
        const int64_t i1 = o[1] * g.stride[1] - g.pad[1] + t1 * g.dil[1];
        if (i1 < 0 || i1 >= g.in[1]) continue;
        for (int64_t t2 = 0; t2 < g.ker[2]; ++t2) {
          const int64_t i2 = o[2] * g.stride[2] - g.pad[2] + t2 * g.dil[2];
          if (i2 < 0 || i2 >= g.in[2]) continue;
          acc += load(xc + i0 * g.xs[2] + i1 * g.xs[3] + i2 * g.xs[4]) *
                 load(wk + t0 * g.ws[2] + t1 * g.ws[3] + t2 * g.ws[4]);
        }
      }
    }
    store(out + n * g.os[0] + k * g.os[1] + o[0] * g.os[2] + o[1] * g.os[3] + o[2] * g.os[4], acc);
  }
}

template <class T>
__global__ void bias_kernel(Geometry g, const T* bias, int64_t bias_stride, T* out, int64_t total) {
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < total; idx += int64_t(gridDim.x) * blockDim.x) {
    int64_t n, k, o[3];
    unravel(g, idx, n, k, o);
    T* p = out + n * g.os[0] + k * g.os[1] + o[0] * g.os[2] + o[1] * g.os[3] + o[2] * g.os[4];
    store(p, load_plain(static_cast<const T*>(p)) + load(bias + k * bias_stride));
  }
}

constexpr int kThreads = 256;

unsigned blocks_for(int64_t total) {
  const int64_t b = (total + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);  // grid-stride beyond this
}

int64_t outputs(const ConvArgs& a) {
  int64_t total = 1;
  for (int64_t s : a.out.sizes) total *= s;
  return total;
}

// Calls launch<T>() with T the element type of `type`.
template <class Launch>
void by_type(DType type, Launch&& launch) {
  switch (type) {
    case DType::f32: launch(float{}); break;
    case DType::f64: launch(double{}); break;
    case DType::f16: launch(__half{}); break;
    case DType::bf16: launch(__nv_bfloat16{}); break;
  }
}

}  // namespace

void conv_reference(int device, const ConvArgs& a) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const Geometry g = geometry(a);
  const int64_t total = outputs(a);
  by_type(a.type, [&](auto tag) {
    using T = decltype(tag);
    reference_kernel<T><<<blocks_for(total), kThreads>>>(g, static_cast<const T*>(a.x.data),
                                                        static_cast<const T*>(a.w.data),
                                                        static_cast<const T*>(a.bias), a.bias_stride,
                                                        static_cast<T*>(a.out.data), a.transposed, total);
  });
  check(cudaGetLastError(), "conv reference kernel launch");
}

void conv_depthwise(int device, const ConvArgs& a) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const Geometry g = geometry(a);
  const int64_t total = outputs(a);
  by_type(a.type, [&](auto tag) {
    using T = decltype(tag);
    depthwise_kernel<T><<<blocks_for(total), kThreads>>>(g, static_cast<const T*>(a.x.data),
                                                        static_cast<const T*>(a.w.data),
                                                        static_cast<const T*>(a.bias), a.bias_stride,
                                                        static_cast<T*>(a.out.data), total);
  });
  check(cudaGetLastError(), "depthwise kernel launch");
}

void add_bias(int device, const ConvArgs& a) {
  check(cudaSetDevice(device), "cudaSetDevice");
  const Geometry g = geometry(a);
  const int64_t total = outputs(a);
  by_type(a.type, [&](auto tag) {
    using T = decltype(tag);
    bias_kernel<T><<<blocks_for(total), kThreads>>>(g, static_cast<const T*>(a.bias), a.bias_stride,
                                                   static_cast<T*>(a.out.data), total);
  });
  check(cudaGetLastError(), "bias kernel launch");
}

}  // namespace bp::cuda_impl
