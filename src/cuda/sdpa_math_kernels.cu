// The device steps of math:cuda (sdpa_math_kernels.h).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "sdpa_math_kernels.h"

namespace bp::cuda_impl {
namespace {

void check(cudaError_t e, const char* what) {
  // Thrown as std::runtime_error: this file cannot see bp::Error; the
  // caller (sdpa_math_cuda.cpp) turns it into a RuntimeError naming math:cuda.
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(e));
}

// ---------------------------------------------------------------- cast

template <class T>
__device__ float load_as_float(const T* p) { return static_cast<float>(*p); }
template <>
__device__ float load_as_float(const __half* p) { return __half2float(*p); }
template <>
__device__ float load_as_float(const __nv_bfloat16* p) { return __bfloat162float(*p); }

template <class D, class S>
__device__ void convert(D* d, const S* s) {
  if constexpr (std::is_same_v<D, double>) *d = static_cast<double>(*s);  // f64 <- f32/f64
  else if constexpr (std::is_same_v<S, double>) *d = static_cast<D>(static_cast<float>(*s));
  else *d = static_cast<D>(load_as_float(s));
}
template <>
__device__ void convert(double* d, const __half* s) { *d = __half2float(*s); }
template <>
__device__ void convert(double* d, const __nv_bfloat16* s) { *d = __bfloat162float(*s); }
template <>
__device__ void convert(__half* d, const double* s) { *d = __double2half(*s); }
template <>
__device__ void convert(__nv_bfloat16* d, const double* s) { *d = __double2bfloat16(*s); }

struct Dims {
  int ndim;
  int64_t sizes[kMaxViewDims];
  int64_t strides[kMaxViewDims];
};

template <class D, class S>
__global__ void cast_kernel(D* dst, const S* src, Dims dims, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i, off = 0;
    for (int d = dims.ndim - 1; d >= 0; --d) {
      off += (rest % dims.sizes[d]) * dims.strides[d];
      rest /= dims.sizes[d];
    }
    convert(dst + i, src + off);
  }
}

template <class F>
void with_type(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(static_cast<float*>(nullptr)); break;
    case DType::f64: f(static_cast<double*>(nullptr)); break;
    case DType::f16: f(static_cast<__half*>(nullptr)); break;
    case DType::bf16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
  }
}

// ---------------------------------------------------------------- softmax

// Philox4x32-10 exactly as src/core/random.cpp computes it.
__device__ uint32_t philox_u32(uint64_t seed, uint64_t first_block, uint64_t i) {
  const uint64_t block = first_block + i / 4;
  uint32_t c[4] = {uint32_t(block), uint32_t(block >> 32), 0u, 0u};
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    const uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
    const uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
    const uint32_t n0 = uint32_t(p1 >> 32) ^ c[1] ^ k0, n2 = uint32_t(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0, c[1] = uint32_t(p1), c[2] = n2, c[3] = uint32_t(p0);
  }
  return c[i % 4];
}

constexpr int kThreads = 256;

template <class Acc, class Op>
__device__ Acc block_reduce(Acc v, Op op, Acc* shared) {
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // shared may still be read by a previous reduction
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = shared[0];
  for (int w = 1; w < kThreads / 32; ++w) v = op(v, shared[w]);
  return v;
}

template <class Acc>
__global__ void softmax_kernel(SoftmaxArgs a) {
  __shared__ Acc shared[kThreads / 32];
  const int64_t row = blockIdx.x;
  const int64_t b = row / a.L, i = row % a.L;
  Acc* s = static_cast<Acc*>(a.scores) + row * a.S;
  const Acc* m = nullptr;
  if (a.mask) {
    int64_t rest = b, off = 0;
    for (int d = a.ext_ndim - 1; d >= 0; --d) {
      off += (rest % a.ext_sizes[d]) * a.mask_ext_strides[d];
      rest /= a.ext_sizes[d];
    }
    m = static_cast<const Acc*>(a.mask) + off + i * a.mask_rs;
  }
  const Acc neg_inf = -INFINITY;
  Acc mx = neg_inf;
  for (int64_t j = threadIdx.x; j < a.S; j += kThreads) {
    Acc x = s[j] * Acc(a.scale);
    if (m) x += m[j * a.mask_cs];
    if (a.causal && j > i) x = neg_inf;
    s[j] = x;
    mx = x > mx ? x : mx;
  }
  mx = block_reduce(mx, [](Acc x, Acc y) { return x > y ? x : y; }, shared);
  if (mx == neg_inf) {  // every key masked out: the row attends to nothing
    for (int64_t j = threadIdx.x; j < a.S; j += kThreads) s[j] = 0;
    return;
  }
  Acc sum = 0;
  for (int64_t j = threadIdx.x; j < a.S; j += kThreads) sum += (s[j] = exp(s[j] - mx));
  sum = block_reduce(sum, [](Acc x, Acc y) { return x + y; }, shared);
  const Acc inv = Acc(1) / sum;
  const Acc keep_scale = a.dropout_p < 1 ? Acc(1) / Acc(1 - a.dropout_p) : Acc(0);
  for (int64_t j = threadIdx.x; j < a.S; j += kThreads) {
    Acc x = s[j] * inv;
    if (a.dropout_p > 0) {
      const uint32_t u = philox_u32(a.seed, a.first_block, uint64_t(row * a.S + j));
      const float uniform = float(u >> 8) * (1.0f / 16777216.0f);
      x = double(uniform) < a.dropout_p ? Acc(0) : x * keep_scale;  // compared as the CPU path compares
    }
    s[j] = x;
  }
}

}  // namespace

void cast_strided(int device, const StridedView& dst, const StridedView& src) {
  check(cudaSetDevice(device), "cudaSetDevice");
  Dims dims{src.ndim, {}, {}};
  int64_t n = 1;
  for (int d = 0; d < src.ndim; ++d) dims.sizes[d] = src.sizes[d], dims.strides[d] = src.strides[d], n *= src.sizes[d];
  if (n == 0) return;
  const int blocks = static_cast<int>(n / kThreads + 1 < 65535 * 8 ? n / kThreads + 1 : 65535 * 8);
  with_type(dst.type, [&](auto* d_tag) {
    with_type(src.type, [&](auto* s_tag) {
      using D = std::remove_pointer_t<decltype(d_tag)>;
      using S = std::remove_pointer_t<decltype(s_tag)>;
      cast_kernel<D, S><<<blocks, kThreads>>>(static_cast<D*>(dst.data), static_cast<const S*>(src.data), dims, n);
    });
  });
  check(cudaGetLastError(), "cast kernel launch");
}

void softmax_rows(int device, const SoftmaxArgs& args) {
  if (args.rows == 0 || args.S == 0) return;
  check(cudaSetDevice(device), "cudaSetDevice");
  if (args.f64)
    softmax_kernel<double><<<static_cast<unsigned>(args.rows), kThreads>>>(args);
  else
    softmax_kernel<float><<<static_cast<unsigned>(args.rows), kThreads>>>(args);
  check(cudaGetLastError(), "softmax kernel launch");
}

}  // namespace bp::cuda_impl
