// cusparselt:spmma: the run of the sparse op's CUDA slot (src/ops/sparse/op.cpp;
// its SDK-free checks in src/ops/sparse/checks_cuda.cpp), through cuSPARSELt.
//
// The problem (Note [Sparse params]) is computed as D = W · Xᵀ, D [n, m]:
//   A: W [n, k], the structured operand, row-major, op N, in cuSPARSELt's
//      compressed form (below);
//   B: X's storage as it is: X row-major [m, k] (linear) with op T, or, when
//      X is a transposed view (mm's B [k, m]), Xᵀ row-major [k, m] with op N;
//   C = D: out, column-major [n, m] (linear's out [m, n]) or row-major
//      [n, m] (mm's out), so no copy on either side.
// f16 / bf16 / f32 accumulate in fp32 (CUSPARSE_COMPUTE_32F; float32 is
// TF32 on the sparse tensor cores, hence the "tf32" check), int8 in int32
// (CUSPARSE_COMPUTE_32I) with an int8 output. A bias is cuSPARSELt's bias
// vector (added before the output is rounded); alpha, beta are floats.
//
// The weight. Params carries it in Backplane's CPU layout (Note [2:4 CPU
// layout]), wherever packed and meta live, and cuSPARSELt needs its own
// compressed form, made from the dense pruned matrix by
// cusparseLtSpMMACompress2. That form depends on the weight only (its
// structured descriptor: n, k, dtype, row-major), not on the activations, so
// it is made once per weight and kept here, keyed by the identity of packed's
// and meta's storages (and offsets, n, k, dtype, device). Params has no
// weight object to hang it on (the entries take packed and meta as plain
// tensors) and tensors have no version counter, so: the entry holds weak
// references to the two storages, so a freed weight never matches a new one
// at the same address; as with PyTorch's SparseSemiStructuredTensor, whose
// compressed form is made when it is built, writing into packed or meta in
// place after the first CUDA product is not seen (docs/dispatch.md). The
// dense matrix is rebuilt on the host (decompress_into), which also gives
// float32's 1:2 test: cuSPARSELt's float32 sparsity is 1:2 (at most one
// nonzero per pair of columns), stricter than 2:4.
//
// Algorithms: with cudnn.benchmark, ids 0..CUSPARSELT_MATMUL_ALG_CONFIG_MAX_ID
// (of this problem's selection; at most cudnn.benchmark_limit of them, 0:
// all) are timed once per problem and the fastest is kept in the autotune
// cache as a tuned detail "alg <id>" (Note [Tuned details]), as cudnn:conv
// keeps its plan; otherwise alg 0 (cuSPARSELt's default configuration).
// Workspace from Backplane's allocator (workspace.h, its own cuSPARSELt
// buffer); the legacy default stream, as the other CUDA rows.
// (Not named *_cusparselt.cpp: register.cpp calls fill_sparse() in every build.)

#include "fills.h"
#include "ops/sparse/params.h"

#ifdef BP_CUDA_HAVE_CUSPARSELT

#include <cuda_runtime.h>
#include <cusparseLt.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backplane/error.h"
#include "backplane/flags.h"
#include "backplane/tensor.h"
#include "cuda_status.h"
#include "gemm_common.h"
#include "ops/sparse/checks_cuda.h"
#include "ops/sparse/layout.h"
#include "workspace.h"

namespace bp::cuda_impl {
namespace {

using ops::sparse::Params;
constexpr const char* kName = "cusparselt:spmma";
constexpr uint32_t kAlignmentBytes = 16;  // every pointer we pass: fresh allocations, or checked (x_operand)

void check_lt(cusparseStatus_t s, const char* call) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    throw_runtime(kName, std::string(kName) + ": " + call + " failed: " + cusparseLtGetErrorString(s) + " (" +
                             cusparseLtGetErrorName(s) + ")");
}

// One handle per (thread, device), as the other libraries'; cuSPARSELt's
// handle is a 512-byte struct that descriptors point into, so it lives on
// the heap (never freed, as the other handles).
const cusparseLtHandle_t* handle_for(int device) {
  return per_thread_handle<cusparseLtHandle_t*>(device, [] {
    auto* h = new cusparseLtHandle_t;
    check_lt(cusparseLtInit(h), "cusparseLtInit");
    return h;
  });
}

cudaDataType value_type(DType d) {
  switch (d) {
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::i8: return CUDA_R_8I;
    default: return CUDA_R_32F;
  }
}

// ---------------------------------------------------------------- the weight

struct Weight {
  std::weak_ptr<Storage> values, meta;  // identity (see the file comment)
  StoragePtr compressed;                // cuSPARSELt's form, on the weight's device
  std::string error;                    // why this weight cannot run ("" when it can)
};

// The structured descriptor of W: compression and every product use this one.
void init_structured(const cusparseLtHandle_t* h, cusparseLtMatDescriptor_t* d, const Params& p) {
  check_lt(cusparseLtStructuredDescriptorInit(h, d, p.n, p.k, p.k, kAlignmentBytes, value_type(p.dtype),
                                              CUSPARSE_ORDER_ROW, CUSPARSELT_SPARSITY_50_PERCENT),
           "cusparseLtStructuredDescriptorInit");
}

// Columns (2i, 2i + 1) of a row hold at most one nonzero (NaN is nonzero).
std::string one_two_violation(const float* w, int64_t n, int64_t k) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t c = 0; c + 1 < k; c += 2) {
      const float a = w[j * k + c], b = w[j * k + c + 1];
      if ((a != 0 || std::isnan(a)) && (b != 0 || std::isnan(b)))
        return "row " + std::to_string(j) + ", columns " + std::to_string(c) + " and " + std::to_string(c + 1) +
               " both nonzero";
    }
  return {};
}

std::shared_ptr<Weight> make_weight(const Params& p) {
  auto w = std::make_shared<Weight>();
  w->values = p.values.storage();
  w->meta = p.meta.storage();
  const size_t bytes = static_cast<size_t>(p.n * p.k) * dtype_itemsize(p.dtype);
  StoragePtr host = allocate_storage(Device::cpu(), std::max<size_t>(bytes, 1));
  ops::sparse::decompress_into(p.values.to(Device::cpu()), p.meta.to(Device::cpu()), p.k, kName, host->data());
  if (p.dtype == DType::f32) {
    w->error = one_two_violation(static_cast<const float*>(host->data()), p.n, p.k);
    if (!w->error.empty()) return w;
  }
  const int device = p.device.index;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  const cusparseLtHandle_t* h = handle_for(device);
  StoragePtr dense = allocate_storage(p.device, std::max<size_t>(bytes, 1));
  check_cuda(cudaMemcpy(dense->data(), host->data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  cusparseLtMatDescriptor_t desc;
  init_structured(h, &desc, p);
  size_t compressed_bytes = 0, buffer_bytes = 0;
  cusparseStatus_t s = cusparseLtSpMMACompressedSize2(h, &desc, &compressed_bytes, &buffer_bytes);
  if (s == CUSPARSE_STATUS_SUCCESS) {
    w->compressed = allocate_storage(p.device, std::max<size_t>(compressed_bytes, 1));
    StoragePtr buffer = allocate_storage(p.device, std::max<size_t>(buffer_bytes, 1));
    s = cusparseLtSpMMACompress2(h, &desc, /*isSparseA=*/1, CUSPARSE_OPERATION_NON_TRANSPOSE, dense->data(),
                                 w->compressed->data(), buffer->data(), /*stream=*/nullptr);
    // dense and buffer are freed on return: the compression must be done
    if (s == CUSPARSE_STATUS_SUCCESS) check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  }
  cusparseLtMatDescriptorDestroy(&desc);
  check_lt(s, "cusparseLtSpMMACompress2");
  return w;
}

bool same_storage(const std::weak_ptr<Storage>& held, const StoragePtr& now) {
  return !held.expired() && !held.owner_before(now) && !now.owner_before(held);
}

std::shared_ptr<Weight> weight_for(const Params& p) {
  const std::string key = std::to_string(p.device.index) + "|" +
                          std::to_string(reinterpret_cast<uintptr_t>(p.values.storage().get())) + "+" +
                          std::to_string(p.values.storage_offset()) + "|" +
                          std::to_string(reinterpret_cast<uintptr_t>(p.meta.storage().get())) + "+" +
                          std::to_string(p.meta.storage_offset()) + "|" + std::to_string(p.n) + "x" +
                          std::to_string(p.k) + "|" + dtype_name(p.dtype);
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<Weight>> cache;
  std::lock_guard<std::mutex> lock(mutex);  // compression is once per weight: serialised
  if (auto it = cache.find(key); it != cache.end()) {
    if (same_storage(it->second->values, p.values.storage()) && same_storage(it->second->meta, p.meta.storage()))
      return it->second;
    cache.erase(it);
  }
  // Entries of freed weights give their device memory back here.
  for (auto it = cache.begin(); it != cache.end();)
    it = it->second->values.expired() || it->second->meta.expired() ? cache.erase(it) : std::next(it);
  if (cache.size() >= 256) cache.clear();  // bounded: weights in a process are few
  return cache.emplace(key, make_weight(p)).first->second;
}

// ---------------------------------------------------------------- one product

// The descriptors and plan of one product with algorithm `alg`. Built in
// place and never moved: the plan may point into them.
class Product {
 public:
  Product(const Params& p, const void* bias, int alg) : h_(handle_for(p.device.index)) {
    try {
      build(p, bias, alg);
    } catch (...) {
      destroy();  // a throwing constructor runs no destructor
      throw;
    }
  }
  Product(const Product&) = delete;
  Product& operator=(const Product&) = delete;
  ~Product() { destroy(); }

  int max_alg() const { return max_alg_; }

  // out = W · Xᵀ (+ bias), on the default stream.
  void run(const Params& p, const void* compressed) {
    const Workspace ws = gemm_workspace(p.device.index, WorkspaceUser::cusparselt, workspace_);
    const float alpha = 1.0f, beta = 0.0f;
    cudaStream_t stream = nullptr;
    check_lt(cusparseLtMatmul(h_, &plan_, &alpha, compressed, p.x.data(), &beta, p.out.data(), p.out.data(), ws.data,
                              &stream, 1),
             "cusparseLtMatmul");
  }

 private:
  void build(const Params& p, const void* bias, int alg) {
    init_structured(h_, &a_, p);
    ++made_;
    const int64_t s0 = p.x.stride(0), s1 = p.x.stride(1);
    const bool x_rows = s1 == 1;  // X row-major [m, k]: B = X with op T; else Xᵀ row-major [k, m], op N
    const cudaDataType t = value_type(p.dtype);
    check_lt(cusparseLtDenseDescriptorInit(h_, &b_, x_rows ? p.m : p.k, x_rows ? p.k : p.m, x_rows ? s0 : s1,
                                           kAlignmentBytes, t, CUSPARSE_ORDER_ROW),
             "cusparseLtDenseDescriptorInit(B)");
    ++made_;
    // D [n, m]: column-major with leading dimension out_rs (linear's out [m, n]), else row-major (mm's [n, m]).
    const bool d_cols = p.out_cs == 1 && p.out_rs >= p.n;
    check_lt(cusparseLtDenseDescriptorInit(h_, &d_, p.n, p.m, d_cols ? p.out_rs : p.out_cs, kAlignmentBytes, t,
                                           d_cols ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW),
             "cusparseLtDenseDescriptorInit(D)");
    ++made_;
    const cusparseComputeType compute = p.dtype == DType::i8 ? CUSPARSE_COMPUTE_32I : CUSPARSE_COMPUTE_32F;
    check_lt(cusparseLtMatmulDescriptorInit(h_, &mm_, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                            x_rows ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE,
                                            &a_, &b_, &d_, &d_, compute),
             "cusparseLtMatmulDescriptorInit");
    if (bias != nullptr)
      check_lt(cusparseLtMatmulDescSetAttribute(h_, &mm_, CUSPARSELT_MATMUL_BIAS_POINTER, &bias, sizeof bias),
               "cusparseLtMatmulDescSetAttribute(BIAS_POINTER)");
    check_lt(cusparseLtMatmulAlgSelectionInit(h_, &sel_, &mm_, CUSPARSELT_MATMUL_ALG_DEFAULT),
             "cusparseLtMatmulAlgSelectionInit");
    has_sel_ = true;
    check_lt(cusparseLtMatmulAlgGetAttribute(h_, &sel_, CUSPARSELT_MATMUL_ALG_CONFIG_MAX_ID, &max_alg_, sizeof max_alg_),
             "cusparseLtMatmulAlgGetAttribute(CONFIG_MAX_ID)");
    check_lt(cusparseLtMatmulAlgSetAttribute(h_, &sel_, CUSPARSELT_MATMUL_ALG_CONFIG_ID, &alg, sizeof alg),
             "cusparseLtMatmulAlgSetAttribute(CONFIG_ID)");
    check_lt(cusparseLtMatmulPlanInit(h_, &plan_, &mm_, &sel_), "cusparseLtMatmulPlanInit");
    has_plan_ = true;
    check_lt(cusparseLtMatmulGetWorkspace(h_, &plan_, &workspace_), "cusparseLtMatmulGetWorkspace");
  }

  void destroy() {
    if (has_plan_) cusparseLtMatmulPlanDestroy(&plan_);
    if (has_sel_) cusparseLtMatmulAlgSelectionDestroy(&sel_);
    cusparseLtMatDescriptor_t* descs[] = {&a_, &b_, &d_};
    for (int i = 0; i < made_; ++i) cusparseLtMatDescriptorDestroy(descs[i]);
    has_plan_ = has_sel_ = false;
    made_ = 0;
  }

  const cusparseLtHandle_t* h_;
  cusparseLtMatDescriptor_t a_, b_, d_;
  int made_ = 0;
  cusparseLtMatmulDescriptor_t mm_;
  cusparseLtMatmulAlgSelection_t sel_;
  bool has_sel_ = false;
  cusparseLtMatmulPlan_t plan_;
  bool has_plan_ = false;
  int max_alg_ = 0;
  size_t workspace_ = 0;
};

// Algorithm `alg` on the call's data: one warm-up, then the best of three
// (ms); -1 when it cannot run.
struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

double time_alg(const Params& p, const void* bias, const void* compressed, int alg) {
  try {
    Product product(p, bias, alg);
    product.run(p, compressed);
    const Events e;
    const cudaEvent_t start = e.start, stop = e.stop;
    float best = -1;
    for (int i = 0; i < 3; ++i) {
      check_cuda(cudaEventRecord(start), "cudaEventRecord");
      product.run(p, compressed);
      check_cuda(cudaEventRecord(stop), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      if (best < 0 || ms < best) best = ms;
    }
    return best;
  } catch (const Error&) {
    return -1;  // this configuration does not run this problem: the others are tried
  }
}

// The algorithm id of this problem: alg 0 without cudnn.benchmark, else the
// tuned one (timed now, once per problem key, or found in the autotune cache).
int alg_for(const Params& p, const void* bias, const void* compressed) {
  if (flags::get_raw(flags::Id::cudnn_benchmark) == 0) return 0;
  const dispatch::Op& op = ops::sparse::sparse_op();
  const dispatch::Implementation& self = *op.find(kName);
  const dispatch::Problem problem = ops::sparse::problem_of(p);
  static std::mutex mutex;  // one search at a time; a second caller then finds its result
  std::lock_guard<std::mutex> lock(mutex);
  if (auto detail = dispatch::tuned_detail(op, problem, self); detail && detail->rfind("alg ", 0) == 0) {
    try {
      return std::stoi(detail->substr(4));
    } catch (const std::exception&) {
      // an unreadable detail: search again
    }
  }
  const int max_alg = Product(p, bias, 0).max_alg();
  const int64_t limit = flags::get_raw(flags::Id::cudnn_benchmark_limit);
  const int64_t tried = limit <= 0 ? max_alg + 1 : std::min<int64_t>(limit, max_alg + 1);
  double best = -1;
  int fastest = -1;
  for (int alg = 0; alg < tried; ++alg) {
    const double ms = time_alg(p, bias, compressed, alg);
    if (ms >= 0 && (best < 0 || ms < best)) best = ms, fastest = alg;
  }
  if (fastest < 0)
    throw_runtime(kName, std::string(kName) + ": none of cuSPARSELt's algorithm ids 0.." + std::to_string(tried - 1) +
                             " could run this product");
  dispatch::store_tuned_detail(op, problem, self, "alg " + std::to_string(fastest), best);
  return fastest;
}

void run(const Params& p) {
  const int device = p.device.index;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  const std::shared_ptr<Weight> w = weight_for(p);
  if (!w->error.empty())
    throw_runtime(kName, std::string(kName) + ": float32 weights need a 1:2 structure: " + w->error);
  // cuSPARSELt reads the bias as a contiguous vector of the output's dtype,
  // on its 16-byte alignment: a strided or offset view goes through a copy.
  Tensor bias;
  if (p.bias.defined()) {
    const bool usable = p.bias.stride(0) == 1 && reinterpret_cast<uintptr_t>(p.bias.data()) % kAlignmentBytes == 0;
    bias = usable ? p.bias : p.bias.to(Device::cpu()).contiguous().to(p.device);
  }
  const void* bias_ptr = bias.defined() ? bias.data() : nullptr;
  const int alg = alg_for(p, bias_ptr, w->compressed->data());
  Product product(p, bias_ptr, alg);
  product.run(p, w->compressed->data());
  if (bias.defined() && bias.data() != p.bias.data())
    check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");  // the copy is freed on return
}

// float32's 1:2 structure needs the weight's values: the last check, after
// the SDK-free ones (a device and a float32 problem cuSPARSELt takes).
bool structure(const Params& p, dispatch::Reasons& r) {
  if (r.failures() > 0 || p.dtype != DType::f32) return true;
  std::shared_ptr<Weight> w;
  try {
    w = weight_for(p);
  } catch (const Error& e) {
    return r.fail("a weight cuSPARSELt compresses", e.what());
  }
  return w->error.empty() ||
         r.fail("a float32 weight with a 1:2 structure (cuSPARSELt's float32 sparsity: at most one nonzero in each "
                "pair of columns)",
                w->error);
}

}  // namespace

void fill_sparse() {
  std::vector<dispatch::Check<Params>> extra;
  extra.push_back(dispatch::Check<Params>{"structure", structure});
  dispatch::fill<Params>(ops::sparse::sparse_op(), kName, run, std::move(extra));
}

}  // namespace bp::cuda_impl

#else  // no cuSPARSELt: the row stays, saying why it cannot run

namespace bp::cuda_impl {
void fill_sparse() {
  dispatch::fill_not_built(ops::sparse::sparse_op(), "cusparselt:spmma",
                           "cuSPARSELt was not found at configure time (scripts/setup.sh fetches it with the CUDA "
                           "toolkit)");
}
}  // namespace bp::cuda_impl

#endif
