// The runs of linalg's CUDA slots (their checks: src/ops/linalg/
// checks_cuda.cpp): cusolver:potrf / getrf / geqrf / syevd / gesvd through
// cuSOLVER's 64-bit generic API (cusolverDnX*, one code path for the four
// dtypes; orgqr / ungqr by type), looped over the batch, and
// cublas:getrf_batched through cuBLAS's batched LU (getrfBatched /
// getrsBatched / getriBatched' building blocks) for many small matrices.
//
// The inputs are staged through the host into the column-major outputs
// (Note [Linalg routines]: the core has no CUDA gather kernels), then every
// routine works in place on the device, writing each matrix's info into
// p.info as LAPACK would, so the front end raises or returns it alike.
// Workspaces come from Backplane's allocator (memory_stats counts them).

#include <cuda_runtime.h>

#include <complex>
#include <vector>

#include "backplane/dispatch.h"
#include "cuda_status.h"
#include "fills.h"
#include "gemm_common.h"
#include "ops/linalg/params.h"

#ifdef BP_CUDA_HAVE_CUSOLVER
#include <cusolverDn.h>
#endif
#ifdef BP_CUDA_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

namespace bp::cuda_impl {

namespace {

using ops::linalg::Params;
using ops::linalg::Routine;

// The column-major staging of the CPU side: the inputs loaded on the host
// (load_inputs on host copies of the outputs), then copied to the device.
void stage_inputs(const Params& p) {
  Params host = p;
  host.device = Device::cpu();
  auto to_host = [](const Tensor& t) { return t.defined() ? Tensor::empty(t.shape(), t.dtype()) : Tensor(); };
  host.a = to_host(p.a);
  host.b = to_host(p.b);
  host.piv = to_host(p.piv);
  host.a_in = p.a_in.defined() ? p.a_in.to(Device::cpu()) : Tensor();
  host.b_in = p.b_in.defined() ? p.b_in.to(Device::cpu()) : Tensor();
  host.piv_in = p.piv_in.defined() ? p.piv_in.to(Device::cpu()) : Tensor();
  ops::linalg::load_inputs(host);
  auto upload = [](const Tensor& h, const Tensor& d) {
    if (h.defined() && h.nbytes() > 0)
      check_cuda(cudaMemcpy(d.data(), h.data(), h.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
  };
  upload(host.a, p.a);
  if (host.b_in.defined() || p.routine == Routine::inv) upload(host.b, p.b);
  if (host.piv_in.defined()) upload(host.piv, p.piv);
}

cudaDataType data_type(DType d) {
  switch (d) {
    case DType::f32: return CUDA_R_32F;
    case DType::f64: return CUDA_R_64F;
    case DType::c64: return CUDA_C_32F;
    default: return CUDA_C_64F;
  }
}
cudaDataType real_type(DType d) { return d == DType::f32 || d == DType::c64 ? CUDA_R_32F : CUDA_R_64F; }

std::size_t bytes_of(const Tensor& t) { return t.itemsize(); }
// The matrix of batch element i of a column-major output.
void* mat(const Tensor& t, int64_t i) {
  return static_cast<char*>(t.data()) + i * t.size(-1) * t.size(-2) * static_cast<int64_t>(t.itemsize());
}
int64_t lead(const Tensor& t) { return ops::linalg::ld(t); }

#ifdef BP_CUDA_HAVE_CUSOLVER

void check_cusolver(cusolverStatus_t s, const char* call) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw_runtime(call, std::string(call) + " failed: cusolverStatus_t " + std::to_string(static_cast<int>(s)));
}

cusolverDnHandle_t solver(int device) {
  return per_thread_handle<cusolverDnHandle_t>(device, [] {
    cusolverDnHandle_t h = nullptr;
    check_cusolver(cusolverDnCreate(&h), "cusolverDnCreate");
    return h;
  });
}

// cuSOLVER's device and host workspaces for one call.
struct Work {
  StoragePtr device;
  std::vector<char> host;
  Work(int dev, std::size_t d, std::size_t h) : device(allocate_storage(Device::cuda(dev), d ? d : 1)), host(h ? h : 1) {}
};

// The generic API's parameter object, made per call (cheap; it holds only options).
struct SolverParams {
  cusolverDnParams_t p = nullptr;
  SolverParams() { check_cusolver(cusolverDnCreateParams(&p), "cusolverDnCreateParams"); }
  ~SolverParams() { cusolverDnDestroyParams(p); }
  SolverParams(const SolverParams&) = delete;
  SolverParams& operator=(const SolverParams&) = delete;
};

int* info_at(const Params& p, int64_t i) { return p.info.data_ptr<int32_t>() + i; }

void run_potrf(const Params& p) {
  stage_inputs(p);
  const int dev = p.device.index;
  cusolverDnHandle_t h = solver(dev);
  SolverParams sp;
  const cudaDataType t = data_type(p.dtype);
  const cublasFillMode_t uplo = p.upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  if (p.routine == Routine::potrs) {
    StoragePtr scratch = allocate_storage(p.device, sizeof(int));
    for (int64_t i = 0; i < p.batch; ++i)
      check_cusolver(cusolverDnXpotrs(h, sp.p, uplo, p.n, p.k, t, mat(p.a, i), lead(p.a), t, mat(p.b, i), lead(p.b),
                                      static_cast<int*>(scratch->data())),
                     "cusolverDnXpotrs");
    return;
  }
  std::size_t dbytes = 0, hbytes = 0;
  check_cusolver(cusolverDnXpotrf_bufferSize(h, sp.p, uplo, p.n, t, mat(p.a, 0), lead(p.a), t, &dbytes, &hbytes),
                 "cusolverDnXpotrf_bufferSize");
  Work w(dev, dbytes, hbytes);
  for (int64_t i = 0; i < p.batch; ++i)
    check_cusolver(cusolverDnXpotrf(h, sp.p, uplo, p.n, t, mat(p.a, i), lead(p.a), t, w.device->data(), dbytes,
                                    w.host.data(), hbytes, info_at(p, i)),
                   "cusolverDnXpotrf");
  // The other triangle: zeroed on the host (no CUDA kernel for it).
  Tensor host = p.a.to(Device::cpu());
  Params hp = p;
  hp.a = host;
  ops::linalg::zero_other_triangle(hp);
  check_cuda(cudaMemcpy(p.a.data(), host.data(), host.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
}

// Pivots: cuSOLVER's 64-bit ipiv <-> the int32 p.piv.
void pivots_to_int32(const Params& p, const Tensor& piv64) {
  const Tensor h = piv64.to(Device::cpu()).to(DType::i32);
  check_cuda(cudaMemcpy(p.piv.data(), h.data(), h.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
}

void run_getrf(const Params& p) {
  stage_inputs(p);
  const int dev = p.device.index;
  cusolverDnHandle_t h = solver(dev);
  SolverParams sp;
  const cudaDataType t = data_type(p.dtype);
  const int64_t mn = p.min_mn();
  Tensor piv64 = p.piv_in.defined() ? p.piv.to(Device::cpu()).to(DType::i64).to(p.device)
                                    : Tensor::empty(p.piv.shape(), DType::i64, p.device);
  auto* ipiv = static_cast<int64_t*>(piv64.data());
  if (p.routine != Routine::getrs) {
    std::size_t dbytes = 0, hbytes = 0;
    check_cusolver(cusolverDnXgetrf_bufferSize(h, sp.p, p.m, p.n, t, mat(p.a, 0), lead(p.a), t, &dbytes, &hbytes),
                   "cusolverDnXgetrf_bufferSize");
    Work w(dev, dbytes, hbytes);
    for (int64_t i = 0; i < p.batch; ++i)
      check_cusolver(cusolverDnXgetrf(h, sp.p, p.m, p.n, t, mat(p.a, i), lead(p.a), ipiv + i * mn, t,
                                      w.device->data(), dbytes, w.host.data(), hbytes, info_at(p, i)),
                     "cusolverDnXgetrf");
    pivots_to_int32(p, piv64);
  }
  if (p.routine == Routine::getrf) return;
  StoragePtr scratch = allocate_storage(p.device, sizeof(int));
  const cublasOperation_t op = p.adjoint ? CUBLAS_OP_C : CUBLAS_OP_N;
  for (int64_t i = 0; i < p.batch; ++i)
    check_cusolver(cusolverDnXgetrs(h, sp.p, op, p.n, p.k, t, mat(p.a, i), lead(p.a), ipiv + i * mn, t, mat(p.b, i),
                                    lead(p.b), static_cast<int*>(scratch->data())),
                   "cusolverDnXgetrs");
}

// Q from geqrf's reflectors: the typed orgqr / ungqr.
cusolverStatus_t orgqr_size(cusolverDnHandle_t h, DType d, int m, int n, int k, void* a, int lda, void* tau, int* lw) {
  switch (d) {
    case DType::f32: return cusolverDnSorgqr_bufferSize(h, m, n, k, static_cast<float*>(a), lda, static_cast<float*>(tau), lw);
    case DType::f64: return cusolverDnDorgqr_bufferSize(h, m, n, k, static_cast<double*>(a), lda, static_cast<double*>(tau), lw);
    case DType::c64:
      return cusolverDnCungqr_bufferSize(h, m, n, k, static_cast<cuComplex*>(a), lda, static_cast<cuComplex*>(tau), lw);
    default:
      return cusolverDnZungqr_bufferSize(h, m, n, k, static_cast<cuDoubleComplex*>(a), lda,
                                         static_cast<cuDoubleComplex*>(tau), lw);
  }
}
cusolverStatus_t orgqr(cusolverDnHandle_t h, DType d, int m, int n, int k, void* a, int lda, void* tau, void* w, int lw,
                       int* info) {
  switch (d) {
    case DType::f32:
      return cusolverDnSorgqr(h, m, n, k, static_cast<float*>(a), lda, static_cast<float*>(tau), static_cast<float*>(w),
                              lw, info);
    case DType::f64:
      return cusolverDnDorgqr(h, m, n, k, static_cast<double*>(a), lda, static_cast<double*>(tau),
                              static_cast<double*>(w), lw, info);
    case DType::c64:
      return cusolverDnCungqr(h, m, n, k, static_cast<cuComplex*>(a), lda, static_cast<cuComplex*>(tau),
                              static_cast<cuComplex*>(w), lw, info);
    default:
      return cusolverDnZungqr(h, m, n, k, static_cast<cuDoubleComplex*>(a), lda, static_cast<cuDoubleComplex*>(tau),
                              static_cast<cuDoubleComplex*>(w), lw, info);
  }
}

void run_geqrf(const Params& p) {
  stage_inputs(p);
  const int dev = p.device.index;
  cusolverDnHandle_t h = solver(dev);
  SolverParams sp;
  const cudaDataType t = data_type(p.dtype);
  const int64_t k = p.min_mn();
  Tensor tau = Tensor::empty({std::max<int64_t>(k, 1)}, p.dtype, p.device);
  std::size_t dbytes = 0, hbytes = 0;
  check_cusolver(cusolverDnXgeqrf_bufferSize(h, sp.p, p.m, p.n, t, mat(p.a, 0), lead(p.a), t, tau.data(), t, &dbytes,
                                             &hbytes),
                 "cusolverDnXgeqrf_bufferSize");
  Work w(dev, dbytes, hbytes);
  StoragePtr scratch = allocate_storage(p.device, sizeof(int));
  auto* info = static_cast<int*>(scratch->data());
  const std::size_t item = bytes_of(p.a);
  for (int64_t i = 0; i < p.batch; ++i) {
    check_cusolver(cusolverDnXgeqrf(h, sp.p, p.m, p.n, t, mat(p.a, i), lead(p.a), t, tau.data(), t, w.device->data(),
                                    dbytes, w.host.data(), hbytes, info),
                   "cusolverDnXgeqrf");
    // R: the upper triangle of the first r_rows rows (zeros below), column by column.
    check_cuda(cudaMemset(mat(p.r, i), 0, p.r_rows * p.n * item), "cudaMemset");
    for (int64_t c = 0; c < p.n; ++c) {
      const int64_t rows = std::min(c + 1, std::min(p.r_rows, p.m));
      check_cuda(cudaMemcpy(static_cast<char*>(mat(p.r, i)) + c * p.r_rows * item,
                            static_cast<char*>(mat(p.a, i)) + c * p.m * item, rows * item, cudaMemcpyDeviceToDevice),
                 "cudaMemcpy");
    }
    if (!p.want_q || p.q_cols == 0) continue;
    // Q: the reflectors' columns (zeros beyond n), then orgqr / ungqr.
    check_cuda(cudaMemset(mat(p.q, i), 0, p.m * p.q_cols * item), "cudaMemset");
    check_cuda(cudaMemcpy(mat(p.q, i), mat(p.a, i), std::min(p.n, p.q_cols) * p.m * item, cudaMemcpyDeviceToDevice),
               "cudaMemcpy");
    int lw = 0;
    const int m = static_cast<int>(p.m), qc = static_cast<int>(p.q_cols), kk = static_cast<int>(k);
    check_cusolver(orgqr_size(h, p.dtype, m, qc, kk, mat(p.q, i), static_cast<int>(lead(p.q)), tau.data(), &lw),
                   "orgqr_bufferSize");
    StoragePtr ow = allocate_storage(p.device, static_cast<std::size_t>(std::max(lw, 1)) * item);
    check_cusolver(orgqr(h, p.dtype, m, qc, kk, mat(p.q, i), static_cast<int>(lead(p.q)), tau.data(), ow->data(), lw,
                         info),
                   "orgqr");
  }
}

void run_syevd(const Params& p) {
  stage_inputs(p);
  const int dev = p.device.index;
  cusolverDnHandle_t h = solver(dev);
  SolverParams sp;
  const cudaDataType t = data_type(p.dtype), rt = real_type(p.dtype);
  const cusolverEigMode_t jobz = p.want_vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cublasFillMode_t uplo = p.upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  std::size_t dbytes = 0, hbytes = 0;
  check_cusolver(cusolverDnXsyevd_bufferSize(h, sp.p, jobz, uplo, p.n, t, mat(p.a, 0), lead(p.a), rt, p.w.data(), t,
                                             &dbytes, &hbytes),
                 "cusolverDnXsyevd_bufferSize");
  Work w(dev, dbytes, hbytes);
  const std::size_t witem = p.w.itemsize();
  for (int64_t i = 0; i < p.batch; ++i)
    check_cusolver(cusolverDnXsyevd(h, sp.p, jobz, uplo, p.n, t, mat(p.a, i), lead(p.a), rt,
                                    static_cast<char*>(p.w.data()) + i * p.n * witem, t, w.device->data(), dbytes,
                                    w.host.data(), hbytes, info_at(p, i)),
                   "cusolverDnXsyevd");
}

void run_gesvd(const Params& p) {
  stage_inputs(p);
  const int dev = p.device.index;
  cusolverDnHandle_t h = solver(dev);
  SolverParams sp;
  const cudaDataType t = data_type(p.dtype), rt = real_type(p.dtype);
  const bool full = p.u_cols == p.m;
  const signed char job = !p.want_vectors ? 'N' : full ? 'A' : 'S';
  const int64_t k = p.min_mn();
  StoragePtr dummy = allocate_storage(p.device, 64);
  auto u_at = [&](int64_t i) { return p.want_vectors ? mat(p.u, i) : dummy->data(); };
  auto vt_at = [&](int64_t i) { return p.want_vectors ? mat(p.vh, i) : dummy->data(); };
  const int64_t ldu = p.want_vectors ? lead(p.u) : 1, ldvt = p.want_vectors ? lead(p.vh) : 1;
  std::size_t dbytes = 0, hbytes = 0;
  check_cusolver(cusolverDnXgesvd_bufferSize(h, sp.p, job, job, p.m, p.n, t, mat(p.a, 0), lead(p.a), rt, p.w.data(), t,
                                             u_at(0), ldu, t, vt_at(0), ldvt, t, &dbytes, &hbytes),
                 "cusolverDnXgesvd_bufferSize");
  Work w(dev, dbytes, hbytes);
  const std::size_t witem = p.w.itemsize();
  for (int64_t i = 0; i < p.batch; ++i)
    check_cusolver(cusolverDnXgesvd(h, sp.p, job, job, p.m, p.n, t, mat(p.a, i), lead(p.a), rt,
                                    static_cast<char*>(p.w.data()) + i * k * witem, t, u_at(i), ldu, t, vt_at(i), ldvt,
                                    t, w.device->data(), dbytes, w.host.data(), hbytes, info_at(p, i)),
                   "cusolverDnXgesvd");
}

// "shape": cuSOLVER's gesvd takes m >= n only.
bool gesvd_shape(const Params& p, dispatch::Reasons& r) {
  return p.m >= p.n || r.fail("m >= n (cuSOLVER's gesvd)", [&] {
           return std::to_string(p.m) + "x" + std::to_string(p.n);
         });
}

#endif  // BP_CUDA_HAVE_CUSOLVER

#ifdef BP_CUDA_HAVE_CUBLAS

cublasHandle_t blas(int device) {
  return per_thread_handle<cublasHandle_t>(device, [] {
    cublasHandle_t h = nullptr;
    check_cublas(cublasCreate(&h), "cublasCreate");
    return h;
  });
}

// The device array of each batch element's matrix pointer.
Tensor pointers(const Tensor& t, int64_t batch, Device device) {
  std::vector<void*> host(static_cast<std::size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) host[i] = mat(t, i);
  Tensor d = Tensor::empty({batch}, DType::i64, device);
  check_cuda(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

cublasStatus_t getrf_batched(cublasHandle_t h, DType d, int n, void* a, int lda, int* piv, int* info, int batch) {
  switch (d) {
    case DType::f32: return cublasSgetrfBatched(h, n, static_cast<float**>(a), lda, piv, info, batch);
    case DType::f64: return cublasDgetrfBatched(h, n, static_cast<double**>(a), lda, piv, info, batch);
    case DType::c64: return cublasCgetrfBatched(h, n, static_cast<cuComplex**>(a), lda, piv, info, batch);
    default: return cublasZgetrfBatched(h, n, static_cast<cuDoubleComplex**>(a), lda, piv, info, batch);
  }
}
cublasStatus_t getrs_batched(cublasHandle_t h, DType d, cublasOperation_t op, int n, int k, void* a, int lda,
                             const int* piv, void* b, int ldb, int* info, int batch) {
  switch (d) {
    case DType::f32:
      return cublasSgetrsBatched(h, op, n, k, static_cast<float* const*>(a), lda, piv, static_cast<float* const*>(b),
                                 ldb, info, batch);
    case DType::f64:
      return cublasDgetrsBatched(h, op, n, k, static_cast<double* const*>(a), lda, piv,
                                 static_cast<double* const*>(b), ldb, info, batch);
    case DType::c64:
      return cublasCgetrsBatched(h, op, n, k, static_cast<cuComplex* const*>(a), lda, piv,
                                 static_cast<cuComplex* const*>(b), ldb, info, batch);
    default:
      return cublasZgetrsBatched(h, op, n, k, static_cast<cuDoubleComplex* const*>(a), lda, piv,
                                 static_cast<cuDoubleComplex* const*>(b), ldb, info, batch);
  }
}

void run_getrf_batched(const Params& p) {
  stage_inputs(p);
  cublasHandle_t h = blas(p.device.index);
  const int n = static_cast<int>(p.n), batch = static_cast<int>(p.batch);
  Tensor ap = pointers(p.a, p.batch, p.device);
  auto* piv = p.piv.data_ptr<int32_t>();
  if (p.routine != Routine::getrs)
    check_cublas(getrf_batched(h, p.dtype, n, ap.data(), static_cast<int>(lead(p.a)), piv, p.info.data_ptr<int32_t>(),
                               batch),
                 "cublas<t>getrfBatched");
  if (p.routine == Routine::getrf) return;
  Tensor bp = pointers(p.b, p.batch, p.device);
  int host_info = 0;  // getrsBatched reports argument errors only, on the host
  check_cublas(getrs_batched(h, p.dtype, p.adjoint ? CUBLAS_OP_C : CUBLAS_OP_N, n, static_cast<int>(p.k), ap.data(),
                             static_cast<int>(lead(p.a)), piv, bp.data(), static_cast<int>(lead(p.b)), &host_info,
                             batch),
               "cublas<t>getrsBatched");
}

#endif  // BP_CUDA_HAVE_CUBLAS

}  // namespace

void fill_linalg() {
  dispatch::Op& op = ops::dispatch_op("linalg");
#ifdef BP_CUDA_HAVE_CUSOLVER
  dispatch::fill<Params>(op, "cusolver:potrf", run_potrf);
  dispatch::fill<Params>(op, "cusolver:getrf", run_getrf);
  dispatch::fill<Params>(op, "cusolver:geqrf", run_geqrf);
  dispatch::fill<Params>(op, "cusolver:syevd", run_syevd);
  std::vector<dispatch::Check<Params>> svd_checks;
  svd_checks.push_back(dispatch::Check<Params>{"shape", gesvd_shape});
  dispatch::fill<Params>(op, "cusolver:gesvd", run_gesvd, std::move(svd_checks));
#else
  for (const char* name : {"cusolver:potrf", "cusolver:getrf", "cusolver:geqrf", "cusolver:syevd", "cusolver:gesvd"})
    dispatch::fill_not_built(op, name, "cuSOLVER was not found at configure time");
#endif
#ifdef BP_CUDA_HAVE_CUBLAS
  dispatch::fill<Params>(op, "cublas:getrf_batched", run_getrf_batched);
#else
  dispatch::fill_not_built(op, "cublas:getrf_batched", "cuBLAS was not found at configure time");
#endif
}

}  // namespace bp::cuda_impl
