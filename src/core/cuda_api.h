#pragma once
// The C interface between the core and the backplane_cuda library.
//
// Note [Loading backplane_cuda]
// All CUDA code lives in libbackplane_cuda.so, which the core dlopens on the
// first CUDA question (cuda_loader.cpp), as ggml loads its backends: the core
// has no link-time CUDA dependency, and a machine without the toolkit, the
// driver or a GPU gets "not built" / "not available: <reason>" answers.
// The library exports one symbol, bp_cuda_api(), returning this table. The
// ABI version must match; add fields only at the end and bump it.
// After a successful load the core calls register_implementations() once:
// it fills the CUDA slots of every op (Note [Slots] in backplane/dispatch.h;
// backplane_cuda links libbackplane).

#include <cstddef>

#define BP_CUDA_ABI_VERSION 3

extern "C" {

struct BpCudaApi {
  int abi_version;
  // Number of devices; -1 with a reason in err when the runtime cannot answer.
  int (*device_count)(char* err, size_t errlen);
  int (*device_name)(int index, char* out, size_t len);
  int (*device_capability)(int index, int* major, int* minor);
  int (*runtime_version)(void);  // cudaRuntimeGetVersion, e.g. 13000
  int (*driver_version)(void);   // cudaDriverGetVersion; 0 when no driver
  // Version of a library linked into backplane_cuda ("cublas", "cublaslt",
  // "cudnn", "cufft", "cusolver", "cusparselt", "nccl"); -1 when not built in.
  long (*library_version)(const char* library);
  int (*malloc_device)(int device, size_t bytes, void** ptr, char* err, size_t errlen);
  int (*free_device)(int device, void* ptr);
  // kind: 0 host->device, 1 device->host, 2 device->device.
  int (*copy)(void* dst, const void* src, size_t bytes, int kind, char* err, size_t errlen);
  // Runs a tiny kernel end to end; 0 on success.
  int (*selftest)(char* err, size_t errlen);
  // ABI 2: the version of a library's headers backplane_cuda was compiled
  // against, in library_version's encoding; -1 when not built in. (cuDNN's
  // compatibility check compares it with the run-time version.)
  long (*compiled_library_version)(const char* library);
  // ABI 3: fills the CUDA slots of the ops' lists; 0 on success, else -1
  // with the reason in err.
  int (*register_implementations)(char* err, size_t errlen);
};

typedef const BpCudaApi* (*BpCudaApiFn)(void);
}
