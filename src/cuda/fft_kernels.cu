// The scale / conjugate pass of cufft:dft (fft_kernels.h).

#include <cuda_runtime.h>

#include "fft_kernels.h"

namespace bp::cuda_impl {
namespace {

// Element i of a complex array is the pair (2i, 2i + 1) of reals.
template <class R>
__global__ void scale_conj(R* v, int64_t count, bool complex, R scale, bool conjugate) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  if (complex) {
    v[2 * i] *= scale;
    v[2 * i + 1] *= conjugate ? -scale : scale;
  } else {
    v[i] *= scale;
  }
}

}  // namespace

int fft_scale_conj(int device, void* values, int64_t count, bool complex, bool dbl, double scale, bool conjugate) {
  if (count == 0 || (scale == 1.0 && !conjugate)) return 0;
  cudaSetDevice(device);
  const int threads = 256;
  const int64_t blocks = (count + threads - 1) / threads;
  if (dbl) scale_conj<double><<<blocks, threads>>>(static_cast<double*>(values), count, complex, scale, conjugate);
  else scale_conj<float><<<blocks, threads>>>(static_cast<float*>(values), count, complex, float(scale), conjugate);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace bp::cuda_impl
