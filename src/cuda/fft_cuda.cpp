// cufft:dft: the run of the fft op's CUDA slot (Note [Slots] in
// backplane/dispatch.h; its checks live in src/ops/fft/checks_cuda.cpp).
//
// Plans live in cuda.cufft_plan_cache[device] (spec 4.4: LRU, max_size
// 4096 by default, 0 disables caching), keyed by everything
// cufftMakePlanMany64 is given: the type (C2C, R2C, C2R, Z2Z, D2Z, Z2D),
// the signal sizes and cuFFT's advanced data layout (embed, stride, dist,
// batch) of input and output. A plan's work area comes from Backplane's
// allocator (cufftSetAutoAllocation off, then cufftSetWorkArea), so
// memory_stats counts it, and is its `bytes` in the cache. A plan and its
// work area serve one call at a time (a mutex per plan).
//
// Strides: a view whose transform and batch dims fit cuFFT's layout (each
// transform dim's stride a multiple of the next one's; the batch dims
// collapsing into one dist) is transformed where it lies. Any other view is
// first made dense (through the host: the core has no gather kernel), and
// so is a c2r input (cuFFT overwrites it) and a multi-dimensional r2c
// input.

#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <numeric>

#include "backplane/dispatch.h"
#include "cuda_status.h"
#include "fills.h"
#include "ops/fft/params.h"

#ifdef BP_CUDA_HAVE_CUFFT
#include <cufft.h>

#include "backplane/backends/cufft_plan_cache.h"
#include "fft_kernels.h"
#endif

namespace bp::cuda_impl {

#ifdef BP_CUDA_HAVE_CUFFT
namespace {

using ops::fft::Kind;
using ops::fft::Params;

void check_cufft(cufftResult r, const char* call) {
  if (r != CUFFT_SUCCESS) throw_runtime(call, std::string(call) + " failed: cufftResult " + std::to_string(int(r)));
}

struct CufftPlan {
  cufftHandle handle = 0;
  bool made = false;
  StoragePtr work;   // the work area, from Backplane's allocator
  std::mutex mutex;  // one call at a time on a plan and its work area
  ~CufftPlan() {
    if (made) cufftDestroy(handle);
  }
};

// cuFFT's advanced data layout.
struct Layout {
  std::vector<long long> n, inembed, onembed;
  long long istride = 1, ostride = 1, idist = 1, odist = 1, batch = 1;
};

// One side's embed and stride for transform dims `tdims` (in cuFFT order);
// false when the view's strides do not fit.
bool embed_of(const Tensor& t, const std::vector<int64_t>& tdims, std::vector<long long>& embed, long long& stride) {
  const std::size_t r = tdims.size();
  embed.assign(r, 0);
  stride = t.stride(tdims[r - 1]);
  if (stride <= 0) return false;
  embed[0] = t.size(tdims[0]);
  for (std::size_t i = 0; i + 1 < r; ++i) {
    const int64_t outer = t.stride(tdims[i]), inner = t.stride(tdims[i + 1]);
    if (outer <= 0 || outer % inner != 0 || outer / inner < t.size(tdims[i + 1])) return false;
    embed[i + 1] = outer / inner;
  }
  return true;
}

// The layout of a transform over `tdims` (cuFFT order) with logical sizes
// `n`, batching every other dim; false when the strides do not fit.
bool layout_of(const Tensor& in, const Tensor& out, const std::vector<int64_t>& tdims, const std::vector<int64_t>& n,
               Layout& L) {
  L.n.assign(n.begin(), n.end());
  if (!embed_of(in, tdims, L.inembed, L.istride) || !embed_of(out, tdims, L.onembed, L.ostride)) return false;
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < out.ndim(); ++d)
    if (std::find(tdims.begin(), tdims.end(), d) == tdims.end() && out.size(d) > 1) batch.push_back(d);
  std::sort(batch.begin(), batch.end(), [&](int64_t a, int64_t b) { return in.stride(a) > in.stride(b); });
  L.batch = 1;
  for (int64_t d : batch) L.batch *= out.size(d);
  if (batch.empty()) return true;
  for (std::size_t j = 0; j + 1 < batch.size(); ++j) {
    const int64_t a = batch[j], b = batch[j + 1];
    if (in.stride(a) != in.stride(b) * in.size(b) || out.stride(a) != out.stride(b) * out.size(b)) return false;
  }
  L.idist = in.stride(batch.back());
  L.odist = out.stride(batch.back());
  return L.idist > 0 && L.odist > 0;
}

cufftType type_of(Kind kind, bool dbl) {
  switch (kind) {
    case Kind::c2c: return dbl ? CUFFT_Z2Z : CUFFT_C2C;
    case Kind::r2c: return dbl ? CUFFT_D2Z : CUFFT_R2C;
    case Kind::c2r: return dbl ? CUFFT_Z2D : CUFFT_C2R;
  }
  return CUFFT_C2C;
}

std::string key_of(cufftType type, const Layout& L) {
  std::string k;
  auto put = [&k](long long v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(type), put(static_cast<long long>(L.n.size()));
  for (std::size_t i = 0; i < L.n.size(); ++i) put(L.n[i]), put(L.inembed[i]), put(L.onembed[i]);
  put(L.istride), put(L.ostride), put(L.idist), put(L.odist), put(L.batch);
  return k;
}

backends::cuda::CufftPlanCache::Made make(int device, cufftType type, Layout L) {
  auto plan = std::make_shared<CufftPlan>();
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  check_cufft(cufftCreate(&plan->handle), "cufftCreate");
  plan->made = true;
  check_cufft(cufftSetAutoAllocation(plan->handle, 0), "cufftSetAutoAllocation");
  size_t work = 0;
  check_cufft(cufftMakePlanMany64(plan->handle, static_cast<int>(L.n.size()), L.n.data(), L.inembed.data(), L.istride,
                                  L.idist, L.onembed.data(), L.ostride, L.odist, type, L.batch, &work),
              "cufftMakePlanMany64");
  plan->work = allocate_storage(Device::cuda(device), work);
  check_cufft(cufftSetWorkArea(plan->handle, plan->work->data()), "cufftSetWorkArea");
  return {std::static_pointer_cast<void>(plan), static_cast<int64_t>(work)};
}

void exec(const CufftPlan& plan, cufftType type, void* in, void* out, bool forward) {
  const int dir = forward ? CUFFT_FORWARD : CUFFT_INVERSE;
  cufftResult r = CUFFT_SUCCESS;
  switch (type) {
    case CUFFT_C2C: r = cufftExecC2C(plan.handle, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), dir); break;
    case CUFFT_Z2Z:
      r = cufftExecZ2Z(plan.handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out), dir);
      break;
    case CUFFT_R2C: r = cufftExecR2C(plan.handle, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out)); break;
    case CUFFT_D2Z:
      r = cufftExecD2Z(plan.handle, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(out));
      break;
    case CUFFT_C2R: r = cufftExecC2R(plan.handle, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out)); break;
    case CUFFT_Z2D:
      r = cufftExecZ2D(plan.handle, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(out));
      break;
    default: break;
  }
  check_cufft(r, "cufftExec");
}

// A view of t with its dims in `order` (no copy).
Tensor permuted(const Tensor& t, const std::vector<int64_t>& order) {
  Shape shape, strides;
  for (int64_t d : order) shape.push_back(t.size(d)), strides.push_back(t.stride(d));
  return Tensor::from_storage(t.storage(), shape, strides, t.storage_offset(), t.dtype());
}

// A dense device copy of a device view (through the host when it is strided).
Tensor dense_copy(const Tensor& t) {
  if (t.is_contiguous()) {
    Tensor c = Tensor::empty(t.shape(), t.dtype(), t.device());
    check_cuda(cudaMemcpy(c.data(), t.data(), t.nbytes(), cudaMemcpyDeviceToDevice), "cudaMemcpy");
    return c;
  }
  return t.to(Device::cpu()).to(t.device());
}

void scale_conj(const Tensor& t, double scale, bool conjugate) {
  const bool complex = is_complex(t.dtype());
  const bool dbl = t.dtype() == DType::c128 || t.dtype() == DType::f64;
  check_cuda(static_cast<cudaError_t>(fft_scale_conj(t.device().index, t.data(), t.numel(), complex, dbl, scale,
                                                     conjugate)),
             "fft scale kernel");
}

void run(const Params& p) {
  const int device = p.device.index;
  const bool dbl = p.is_double();
  const cufftType type = type_of(p.kind, dbl);
  // cuFFT order: c2c by decreasing input stride; the real kinds keep the halved dim last.
  std::vector<int64_t> tdims = p.dims, n = p.n;
  if (p.kind == Kind::c2c) {
    std::vector<std::size_t> idx(tdims.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return p.in.stride(p.dims[a]) > p.in.stride(p.dims[b]);
    });
    for (std::size_t i = 0; i < idx.size(); ++i) tdims[i] = p.dims[idx[i]], n[i] = p.n[idx[i]];
  }
  Tensor in = p.in;
  const bool overwritten = p.kind == Kind::c2r || (p.kind == Kind::r2c && p.dims.size() > 1);
  if (overwritten || p.conj_in) {
    in = dense_copy(p.in);
    if (p.conj_in) scale_conj(in, 1.0, true);
  }
  Tensor out = p.out;
  Layout L;
  bool direct = layout_of(in, out, tdims, n, L);
  std::vector<int64_t> order;  // the fallback's dim order: batch dims, then the transform dims
  if (!direct) {
    for (int64_t d = 0; d < p.out.ndim(); ++d)
      if (std::find(tdims.begin(), tdims.end(), d) == tdims.end()) order.push_back(d);
    const int64_t nb = static_cast<int64_t>(order.size());
    order.insert(order.end(), tdims.begin(), tdims.end());
    in = dense_copy(permuted(in, order));
    out = Tensor::empty(permuted(p.out, order).shape(), p.out.dtype(), p.device);
    std::vector<int64_t> canonical;
    for (std::size_t i = 0; i < tdims.size(); ++i) canonical.push_back(nb + static_cast<int64_t>(i));
    if (!layout_of(in, out, canonical, n, L)) throw_runtime("fft", "fft: cuFFT cannot take a dense layout");
  }
  auto& cache = backends::cuda::cufft_plan_cache(device);
  const auto plan = std::static_pointer_cast<CufftPlan>(
      cache.get_or_create_sized(key_of(type, L), [&] { return make(device, type, L); }));
  {
    std::lock_guard<std::mutex> lock(plan->mutex);
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    exec(*plan, type, in.data(), out.data(), p.forward);
  }
  if (!direct) {  // back into the caller's dim order (through the host)
    const Tensor host = out.to(Device::cpu());
    Tensor dense = Tensor::empty(p.out.shape(), p.out.dtype());
    Tensor view = permuted(dense, order);
    view.copy_from(host);
    check_cuda(cudaMemcpy(p.out.data(), dense.data(), dense.nbytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  scale_conj(p.out, p.scale, p.conj_out);
}

}  // namespace
#endif

// The fft op's CUDA slot (src/ops/fft/op.cpp), when this library was built with cuFFT.
void fill_fft() {
#ifdef BP_CUDA_HAVE_CUFFT
  dispatch::fill<Params>(ops::fft::fft_op(), "cufft:dft", run);
#endif
}

}  // namespace bp::cuda_impl
