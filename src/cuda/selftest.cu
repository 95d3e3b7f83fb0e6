// A tiny kernel run end to end (allocate, launch, copy back, check), used by
// `backplane info --selftest` and scripts/gpu-check to prove the toolchain,
// the driver and the device agree.

#include <cuda_runtime.h>

#include <cstdio>

namespace {
__global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
}  // namespace

int bp_cuda_selftest(char* err, size_t errlen) {
  constexpr int n = 1000;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = float(i);
  float* dev = nullptr;
  cudaError_t e = cudaMalloc(&dev, sizeof host);
  if (e == cudaSuccess) e = cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    add_one<<<(n + 255) / 256, 256>>>(dev, n);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost);
  if (dev) cudaFree(dev);
  if (e != cudaSuccess) {
    std::snprintf(err, errlen, "%s", cudaGetErrorString(e));
    return -1;
  }
  for (int i = 0; i < n; ++i) {
    if (host[i] != float(i) + 1.0f) {
      std::snprintf(err, errlen, "wrong result at %d: %g", i, host[i]);
      return -1;
    }
  }
  return 0;
}
