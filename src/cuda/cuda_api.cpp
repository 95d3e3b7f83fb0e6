// bp_cuda_api(): the table the core calls (Note [Loading backplane_cuda]).

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include <exception>

#include "core/cuda_api.h"
#include "fills.h"

#ifdef BP_CUDA_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#ifdef BP_CUDA_HAVE_CUBLASLT
#include <cublasLt.h>
#endif
#ifdef BP_CUDA_HAVE_CUDNN
#include <cudnn.h>
#endif
#ifdef BP_CUDA_HAVE_CUFFT
#include <cufft.h>
#endif
#ifdef BP_CUDA_HAVE_CUSOLVER
#include <cusolver_common.h>
#endif
#ifdef BP_CUDA_HAVE_CUSPARSELT
#include <cusparseLt.h>
#endif
#ifdef BP_CUDA_HAVE_NCCL
#include <nccl.h>
#endif

namespace {

void put(char* out, size_t len, const char* text) {
  if (out != nullptr && len > 0) std::snprintf(out, len, "%s", text);
}

int fail(cudaError_t e, char* err, size_t len) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
  put(err, len, buf);
  return -1;
}

int device_count(char* err, size_t len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return fail(e, err, len);
  if (n == 0) put(err, len, "no CUDA device");
  return n;
}

int device_name(int index, char* out, size_t len) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, index) != cudaSuccess) return -1;
  put(out, len, p.name);
  return 0;
}

int device_capability(int index, int* major, int* minor) {
  if (cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, index) != cudaSuccess) return -1;
  if (cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, index) != cudaSuccess) return -1;
  return 0;
}

int runtime_version() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return v;
}

int driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) return 0;
  return v;
}

// A version as major*10000 + minor*100 + patch (cuDNN's own encoding).
constexpr long encode_version(long major, long minor, long patch) { return major * 10000L + minor * 100L + patch; }

// The same from a library's XxxGetProperty(libraryPropertyType, int*) function.
template <class GetProperty>
long version_from_properties(GetProperty get) {
  int major = 0, minor = 0, patch = 0;
  get(MAJOR_VERSION, &major);
  get(MINOR_VERSION, &minor);
  get(PATCH_LEVEL, &patch);
  return encode_version(major, minor, patch);
}

// Library versions as major*10000 + minor*100 + patch (cuDNN's own encoding),
// read from the library at run time, not from the headers.
long library_version(const char* lib) {
  const auto is = [&](const char* name) { return std::strcmp(lib, name) == 0; };
#ifdef BP_CUDA_HAVE_CUBLAS
  if (is("cublas")) return version_from_properties(cublasGetProperty);
#endif
#ifdef BP_CUDA_HAVE_CUBLASLT
  if (is("cublaslt")) {
    size_t v = cublasLtGetVersion();  // major*10000 + minor*100 + patch
    return static_cast<long>(v);
  }
#endif
#ifdef BP_CUDA_HAVE_CUDNN
  if (is("cudnn")) {
    size_t v = cudnnGetVersion();  // cuDNN 9: major*10000 + minor*100 + patch
    return static_cast<long>(v);
  }
#endif
#ifdef BP_CUDA_HAVE_CUFFT
  if (is("cufft")) {
    int v = 0;
    cufftGetVersion(&v);  // major*1000 + minor*100 + patch (CUFFT_VERSION's encoding)
    return v / 1000 * 10000L + v % 1000;
  }
#endif
#ifdef BP_CUDA_HAVE_CUSOLVER
  if (is("cusolver")) return version_from_properties(cusolverGetProperty);
#endif
#ifdef BP_CUDA_HAVE_CUSPARSELT
  if (is("cusparselt")) return version_from_properties(cusparseLtGetProperty);
#endif
#ifdef BP_CUDA_HAVE_NCCL
  if (is("nccl")) {
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) return -1;
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch; older major*1000 + minor*100 + patch.
    return v >= 10000 ? v : v / 1000 * 10000L + v % 1000;
  }
#endif
  return -1;
}

// The same encoding, from the headers this library was compiled against.
long compiled_library_version(const char* lib) {
  const auto is = [&](const char* name) { return std::strcmp(lib, name) == 0; };
#ifdef BP_CUDA_HAVE_CUBLAS
  if (is("cublas")) return encode_version(CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
#endif
#ifdef BP_CUDA_HAVE_CUBLASLT
  if (is("cublaslt")) return encode_version(CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
#endif
#ifdef BP_CUDA_HAVE_CUDNN
  if (is("cudnn")) return encode_version(CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
#endif
#ifdef BP_CUDA_HAVE_CUFFT
  if (is("cufft")) return encode_version(CUFFT_VER_MAJOR, CUFFT_VER_MINOR, CUFFT_VER_PATCH);
#endif
#ifdef BP_CUDA_HAVE_CUSOLVER
  if (is("cusolver")) return encode_version(CUSOLVER_VER_MAJOR, CUSOLVER_VER_MINOR, CUSOLVER_VER_PATCH);
#endif
#ifdef BP_CUDA_HAVE_CUSPARSELT
  if (is("cusparselt")) return encode_version(CUSPARSELT_VER_MAJOR, CUSPARSELT_VER_MINOR, CUSPARSELT_VER_PATCH);
#endif
#ifdef BP_CUDA_HAVE_NCCL
  if (is("nccl")) return encode_version(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
#endif
  return -1;
}

int malloc_device(int device, size_t bytes, void** ptr, char* err, size_t len) {
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaMalloc(ptr, bytes);
  return e == cudaSuccess ? 0 : fail(e, err, len);
}

int free_device(int device, void* ptr) {
  cudaSetDevice(device);
  return cudaFree(ptr) == cudaSuccess ? 0 : -1;
}

int copy(void* dst, const void* src, size_t bytes, int kind, char* err, size_t len) {
  const cudaMemcpyKind k = kind == 0 ? cudaMemcpyHostToDevice
                           : kind == 1 ? cudaMemcpyDeviceToHost
                                       : cudaMemcpyDeviceToDevice;
  cudaError_t e = cudaMemcpy(dst, src, bytes, k);
  return e == cudaSuccess ? 0 : fail(e, err, len);
}

int register_implementations(char* err, size_t len) {
  try {
    bp::cuda_impl::register_implementations();
    return 0;
  } catch (const std::exception& e) {
    put(err, len, e.what());
    return -1;
  }
}

}  // namespace

int bp_cuda_selftest(char* err, size_t errlen);  // selftest.cu

extern "C" __attribute__((visibility("default"))) const BpCudaApi* bp_cuda_api(void) {
  static const BpCudaApi api = {
      BP_CUDA_ABI_VERSION, device_count, device_name,   device_capability, runtime_version,
      driver_version,      library_version, malloc_device, free_device,    copy,
      bp_cuda_selftest,    compiled_library_version, register_implementations,
  };
  return &api;
}
